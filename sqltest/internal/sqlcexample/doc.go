// Package sqlcexample is the code sqlc generates from schema.sql and
// query.sql with sqlc.yaml in this directory (run `sqlc generate` here):
// the overrides make the key columns ringflake.ID and ringflake.NullID.
// The tests of sqltest run its queries against PostgreSQL. Only this file
// is written by hand.
//
// NOTE: sqlc could not be built on the machine this was made on, so
// db.go, models.go and query.sql.go were written by hand in the form sqlc
// v1.31.1 generates for sql_package pgx/v5; regenerate them with sqlc to
// replace them.
package sqlcexample
