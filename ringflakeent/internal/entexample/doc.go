// Package entexample is an ent schema keyed by ringflake IDs, with the
// code ent generates for it committed in ent/. Its tests create and query
// it on PostgreSQL and regenerate the code, failing when the committed
// code is stale; to regenerate it after changing the schema, run
//
//	go test ./internal/entexample -run TestGeneratedCodeIsCurrent -update
package entexample
