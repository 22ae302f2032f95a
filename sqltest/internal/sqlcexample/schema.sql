-- The example's table: every key a ringflake ID in a BIGINT column, which
-- the overrides of sqlc.yaml map to ringflake.ID (NOT NULL) and
-- ringflake.NullID (nullable). amount is a BIGINT that is not an ID: it
-- stays int64, which is why the overrides name columns.
CREATE TABLE orders (
    id        BIGINT PRIMARY KEY,
    parent_id BIGINT REFERENCES orders (id),
    customer  TEXT   NOT NULL,
    amount    BIGINT NOT NULL
);
