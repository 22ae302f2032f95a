package ringflakeent

import (
	"context"
	"fmt"

	"entgo.io/ent"
	"entgo.io/ent/dialect"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/mixin"

	"github.com/ringflake/ringflake"
)

// Mixin is an ent mixin that declares a schema's id field as a
// [ringflake.ID]: Go type ringflake.ID in a BIGINT column without a
// sequence or identity (the IDs come from [Hook], not the database),
// immutable once created. A create that sets the id itself (an import)
// keeps it. Its zero value is ready to use.
//
// The field is ent's "other" kind with the column type of [SchemaType],
// not field.Int64(…).GoType(ringflake.ID(0)): for an int64 id whose Go
// type is a sql.Scanner, the CreateBulk code ent v0.14 generates hands a
// *ringflake.ID to Scan after the rows are written, and so fails a bulk
// create that did write. Declare fields that hold another entity's
// ringflake id (edge fields) the same way, so that their type matches:
//
//	field.Other("author_id", ringflake.ID(0)).SchemaType(ringflakeent.SchemaType())
type Mixin struct {
	mixin.Schema
}

// Fields returns the id field.
func (Mixin) Fields() []ent.Field {
	return []ent.Field{
		field.Other("id", ringflake.ID(0)).
			SchemaType(SchemaType()).
			Immutable().
			Comment("A ringflake ID, filled on create by ringflakeent.Hook."),
	}
}

// SchemaType returns the column type of a ringflake.ID field in each SQL
// dialect ent supports: BIGINT (a signed 64-bit integer; ringflake IDs
// are never negative, so they fit without an UNSIGNED).
func SchemaType() map[string]string {
	return map[string]string{
		dialect.Postgres: "bigint",
		dialect.MySQL:    "bigint",
		dialect.SQLite:   "integer",
	}
}

// A Source issues IDs in runs, as [ringflake.Generator.NextN] does.
// *ringflake.Generator is the Source to use; the interface lets a test
// wrap one.
type Source interface {
	NextN(ctx context.Context, ids []ringflake.ID) (int, error)
}

// idMutation is what ent generates for the create mutation of a schema
// whose id field is a ringflake.ID.
type idMutation interface {
	ID() (ringflake.ID, bool)
	SetID(ringflake.ID)
}

// Hook returns an ent hook that gives every entity created without an id
// a new one from src, when the entity's id field is a [ringflake.ID] (as
// [Mixin] declares it). Mutations of other schemas, and creates whose id
// is already set, pass through unchanged. Install it on the client, for
// every schema, or on one schema's client:
//
//	client.Use(ringflakeent.Hook(gen))
//	client.User.Use(ringflakeent.Hook(gen))
//
// It fills Create and each builder of CreateBulk (one ID per entity, in
// builder order; ent runs hooks per entity), and the create of an upsert
// (OnConflict). When src fails — a lease lost, a rollback its strategy
// refuses, a closed generator — the create fails with src's error (match
// it with errors.Is) and nothing is written; a CreateBulk fails whole.
// With a nil src every create it would fill fails with an error matching
// [ringflake.ErrInvalidOption].
func Hook(src Source) ent.Hook {
	return func(next ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
			im, ok := m.(idMutation)
			if !ok || !m.Op().Is(ent.OpCreate) {
				return next.Mutate(ctx, m)
			}
			if _, set := im.ID(); set {
				return next.Mutate(ctx, m)
			}
			if src == nil {
				return nil, fmt.Errorf("%w: ringflakeent.Hook: nil Source", ringflake.ErrInvalidOption)
			}
			var id [1]ringflake.ID
			if _, err := src.NextN(ctx, id[:]); err != nil {
				return nil, fmt.Errorf("ringflakeent: taking an ID for a new %s: %w", m.Type(), err)
			}
			im.SetID(id[0])
			return next.Mutate(ctx, m)
		})
	}
}
