// Package ringflakeent gives ent (entgo.io/ent) schemas ringflake IDs as
// primary keys: [Mixin] declares the id field, of Go type [ringflake.ID]
// in a BIGINT column without a sequence, and [Hook] fills it on create
// from the process's generator.
//
// In the schema:
//
//	func (User) Mixin() []ent.Mixin { return []ent.Mixin{ringflakeent.Mixin{}} }
//
// and where the service opens its client:
//
//	client.Use(ringflakeent.Hook(gen)) // gen: the process's *ringflake.Generator
//
// The hook lives on the client, not in the schema, because ent builds a
// schema's own hooks when its package is initialised, before the service
// has a generator; a schema hook would need a global generator. It takes
// its ID with an error (a lost lease, a rollback the strategy refuses),
// which a default function (field.Int64("id").DefaultFunc) could not
// return: the create fails with that error and writes nothing.
//
// The module is separate from ringflake's, so that only services that use
// ent build ent.
//
// ringflake is licensed under the Apache License 2.0: see LICENSE at the
// root of the repository.
package ringflakeent
