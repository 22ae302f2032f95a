// Package sqlcexample is the code sqlc v1.31.1 generates from schema.sql
// and query.sql with sqlc.yaml in this directory (run `sqlc generate`
// here): the overrides make the key columns ringflake.ID and
// ringflake.NullID. The tests of sqltest run its queries against
// PostgreSQL. Only this file is written by hand.
package sqlcexample
