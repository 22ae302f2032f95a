package ringflakegorm

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"gorm.io/gorm"
	"gorm.io/gorm/schema"

	"github.com/ringflake/ringflake"
)

// ErrInvalidModel is matched by the error a create fails with when a
// model's ringflake tag cannot be followed: a tag other than "fill" or
// "-", or "fill" on a field that is not a [ringflake.ID]. Nothing is
// written then. Details are in a [*TagError].
var ErrInvalidModel = errors.New("ringflakegorm: invalid model")

// TagError reports a struct field whose ringflake tag cannot be followed.
// It matches [ErrInvalidModel].
type TagError struct {
	Model  string // the model's Go type name
	Field  string // the field's Go name
	Reason string
}

func (e *TagError) Error() string {
	return fmt.Sprintf("ringflakegorm: invalid model: %s.%s: %s", e.Model, e.Field, e.Reason)
}

// Is reports whether target is [ErrInvalidModel].
func (e *TagError) Is(target error) bool { return target == ErrInvalidModel }

// A Source issues IDs in runs, as [ringflake.Generator.NextN] does: it
// fills ids and returns how many it filled, all of them unless it returns
// an error. *ringflake.Generator is the Source to use; the interface lets
// a test wrap one.
type Source interface {
	NextN(ctx context.Context, ids []ringflake.ID) (int, error)
}

// Name is the name the plugin registers under, with [gorm.DB.Use], and
// the name of its create callback.
const Name = "ringflake"

// Plugin is a [gorm.Plugin] that fills the keys of the rows a gorm
// create writes with IDs from a [Source]. A Plugin is safe for concurrent
// use, as a *gorm.DB is. Make one with [New].
type Plugin struct {
	src    Source
	fields sync.Map // *schema.Schema → []*schema.Field or error
}

// New returns a plugin that takes IDs from src, normally the process's one
// *ringflake.Generator. Register it once per *gorm.DB:
//
//	db.Use(ringflakegorm.New(gen))
func New(src Source) *Plugin { return &Plugin{src: src} }

// Name returns [Name].
func (p *Plugin) Name() string { return Name }

// Initialize registers the plugin's create callback on db, before
// gorm:before_create, so that BeforeCreate hooks see the keys and
// associations saved after the row get its key. It fails, matching
// [ringflake.ErrInvalidOption], when the plugin has no Source, and with
// gorm's error when the callback cannot be registered.
//
// The callback fills, in every row a create writes — [gorm.DB.Create],
// [gorm.DB.CreateInBatches] (batch by batch), [gorm.DB.Save] and
// [gorm.DB.FirstOrCreate] of a new row, upserts with clause.OnConflict,
// and rows of associations gorm creates with their parent — each field
// of type [ringflake.ID] that is zero and either
//   - a primary key, unless tagged `ringflake:"-"`, or
//   - tagged `ringflake:"fill"` (a second, public key, for instance).
//
// It takes the IDs of one statement with a single [Source] NextN call, in
// row order, so with a *ringflake.Generator the keys of a batch increase
// with the row's index. Non-zero fields are left as they are (rows
// imported with their keys). Creates from a map are not filled; the
// primary key of a map is the caller's to set.
//
// When the source fails (a lease lost, a rollback the strategy refuses,
// a closed generator) the create fails with the source's error, which
// [errors.Is] finds through gorm's error, and writes nothing: the
// statement is not sent and gorm's transaction around it, if any, rolls
// back. IDs the source issued before failing are not used again.
func (p *Plugin) Initialize(db *gorm.DB) error {
	if p == nil || p.src == nil {
		return fmt.Errorf("%w: ringflakegorm.New: nil Source", ringflake.ErrInvalidOption)
	}
	return db.Callback().Create().Before("gorm:before_create").Register(Name+":fill", p.fill)
}

// fill is the create callback.
func (p *Plugin) fill(db *gorm.DB) {
	st := db.Statement
	if db.Error != nil || st.Schema == nil {
		return
	}
	fields, err := p.fieldsOf(st.Schema)
	if err != nil {
		_ = db.AddError(err)
		return
	}
	if len(fields) == 0 {
		return
	}
	ctx := st.Context
	if ctx == nil {
		ctx = context.Background()
	}
	rows := structsOf(st.ReflectValue)
	type slot struct {
		row   reflect.Value
		field *schema.Field
	}
	var empty []slot
	for _, row := range rows {
		for _, f := range fields {
			if _, zero := f.ValueOf(ctx, row); zero {
				empty = append(empty, slot{row, f})
			}
		}
	}
	if len(empty) == 0 {
		return
	}
	ids := make([]ringflake.ID, len(empty))
	if _, err := p.src.NextN(ctx, ids); err != nil {
		_ = db.AddError(fmt.Errorf("ringflakegorm: taking %d IDs for %s: %w", len(ids), st.Schema.Table, err))
		return
	}
	for i, s := range empty {
		if err := s.field.Set(ctx, s.row, ids[i]); err != nil {
			_ = db.AddError(fmt.Errorf("ringflakegorm: setting %s.%s: %w", st.Schema.Name, s.field.Name, err))
			return
		}
	}
}

// structsOf returns the addressable structs a create writes: v itself, or
// the elements of a slice or array (through pointers). Anything else (a
// map) yields none.
func structsOf(v reflect.Value) []reflect.Value {
	v = reflect.Indirect(v)
	switch v.Kind() {
	case reflect.Struct:
		if v.CanAddr() {
			return []reflect.Value{v}
		}
	case reflect.Slice, reflect.Array:
		rows := make([]reflect.Value, 0, v.Len())
		for i := range v.Len() {
			row := reflect.Indirect(v.Index(i))
			if row.Kind() == reflect.Struct && row.CanAddr() {
				rows = append(rows, row)
			}
		}
		return rows
	}
	return nil
}

var idType = reflect.TypeFor[ringflake.ID]()

// fieldsOf returns the fields of s to fill, or a *TagError; it works each
// schema out once.
func (p *Plugin) fieldsOf(s *schema.Schema) ([]*schema.Field, error) {
	if v, ok := p.fields.Load(s); ok {
		if err, ok := v.(error); ok {
			return nil, err
		}
		return v.([]*schema.Field), nil
	}
	fields, err := fillable(s)
	if err != nil {
		p.fields.Store(s, err)
		return nil, err
	}
	p.fields.Store(s, fields)
	return fields, nil
}

func fillable(s *schema.Schema) ([]*schema.Field, error) {
	var fields []*schema.Field
	for _, f := range s.Fields {
		tag, tagged := f.Tag.Lookup("ringflake")
		switch {
		case tagged && tag == "-":
		case tagged && tag == "fill":
			if f.FieldType != idType {
				return nil, &TagError{Model: s.Name, Field: f.Name, Reason: fmt.Sprintf(`ringflake:"fill" on a field of type %v; want ringflake.ID`, f.FieldType)}
			}
			fields = append(fields, f)
		case tagged:
			return nil, &TagError{Model: s.Name, Field: f.Name, Reason: fmt.Sprintf(`unknown tag ringflake:%q; want "fill" or "-"`, tag)}
		case f.PrimaryKey && f.FieldType == idType:
			fields = append(fields, f)
		}
	}
	return fields, nil
}
