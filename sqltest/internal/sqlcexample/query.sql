-- name: CreateOrder :one
INSERT INTO orders (id, parent_id, customer, amount)
VALUES ($1, $2, $3, $4)
RETURNING *;

-- name: GetOrder :one
SELECT * FROM orders WHERE id = $1;

-- name: ListChildren :many
SELECT * FROM orders WHERE parent_id = $1 ORDER BY id;

-- name: ListRoots :many
SELECT id, customer FROM orders WHERE parent_id IS NULL ORDER BY id;

-- name: ListAfter :many
SELECT id FROM orders WHERE id > sqlc.arg(after) ORDER BY id LIMIT sqlc.arg(max_rows);
