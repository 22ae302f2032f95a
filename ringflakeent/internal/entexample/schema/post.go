package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/ringflakeent"
)

// Post holds the schema definition for the Post entity.
type Post struct {
	ent.Schema
}

// Mixin gives posts a ringflake ID.
func (Post) Mixin() []ent.Mixin { return []ent.Mixin{ringflakeent.Mixin{}} }

// Fields of the Post. The author's id, a foreign key, is a ringflake.ID
// too.
func (Post) Fields() []ent.Field {
	return []ent.Field{
		field.String("title"),
		field.Other("author_id", ringflake.ID(0)).SchemaType(ringflakeent.SchemaType()),
	}
}

// Edges of the Post.
func (Post) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("author", User.Type).Ref("posts").Field("author_id").Unique().Required(),
	}
}
