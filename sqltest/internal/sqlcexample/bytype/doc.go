// Package bytype is the code sqlc v1.31.1 generates from ../schema.sql
// and ../query.sql with the db_type overrides of ../sqlc.yaml, which make
// every BIGINT a ringflake.ID (or NullID), the amount column included.
// Only this file is written by hand.
package bytype
