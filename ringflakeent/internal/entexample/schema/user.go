// Package schema is the ent schema of the example: users who write posts,
// both keyed by ringflake IDs.
package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/ringflakeent"
)

// User holds the schema definition for the User entity.
type User struct {
	ent.Schema
}

// Mixin gives users a ringflake ID.
func (User) Mixin() []ent.Mixin { return []ent.Mixin{ringflakeent.Mixin{}} }

// Fields of the User.
func (User) Fields() []ent.Field {
	return []ent.Field{
		field.String("name"),
		field.String("email").Unique(),
		field.Other("invited_by", ringflake.ID(0)).SchemaType(ringflakeent.SchemaType()).Optional().Nillable(),
	}
}

// Edges of the User.
func (User) Edges() []ent.Edge {
	return []ent.Edge{edge.To("posts", Post.Type)}
}
