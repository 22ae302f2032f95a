package ringflakeent

import (
	"context"
	"fmt"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/mixin"

	"github.com/ringflake/ringflake"
)

// Mixin is an ent mixin that declares a schema's id field as a
// [ringflake.ID]: Go type ringflake.ID, an int64 in a BIGINT column
// without a sequence or identity (the IDs come from [Hook], not the
// database), immutable once created. A create that sets the id itself
// (an import) keeps it. Its zero value is ready to use.
type Mixin struct {
	mixin.Schema
}

// Fields returns the id field.
func (Mixin) Fields() []ent.Field {
	noSequence := false
	return []ent.Field{
		field.Int64("id").
			GoType(ringflake.ID(0)).
			Immutable().
			Annotations(entsql.Annotation{Incremental: &noSequence}).
			Comment("A ringflake ID, filled on create by ringflakeent.Hook."),
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
// Hook panics if src is nil, as it is a programming error found at
// start-up.
func Hook(src Source) ent.Hook {
	if src == nil {
		panic("ringflakeent.Hook: nil Source")
	}
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
