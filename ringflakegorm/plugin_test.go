package ringflakegorm_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/ringflakegorm"
	"github.com/ringflake/ringflake/strategies"
)

// Order has a ringflake primary key and a second key the tag fills.
type Order struct {
	ID       ringflake.ID `gorm:"primaryKey;autoIncrement:false"`
	Ref      ringflake.ID `gorm:"uniqueIndex" ringflake:"fill"`
	Customer string
	Amount   int64
}

// Plain leaves gorm's defaults: a field named ID is the primary key, and
// gorm takes an integer key for an auto-increment column (bigserial).
type Plain struct {
	ID   ringflake.ID
	Name string
}

// Account is upserted by its unique email.
type Account struct {
	ID     ringflake.ID `gorm:"primaryKey;autoIncrement:false"`
	Email  string       `gorm:"uniqueIndex;not null"`
	Visits int
}

// Customer has many Invoices, created with it.
type Customer struct {
	ID       ringflake.ID `gorm:"primaryKey;autoIncrement:false"`
	Name     string
	Invoices []Invoice
}

type Invoice struct {
	ID         ringflake.ID `gorm:"primaryKey;autoIncrement:false"`
	CustomerID ringflake.ID `gorm:"not null"`
	Total      int64
}

func TestCreateOneRow(t *testing.T) {
	gen, _ := newGen(t, 3)
	src := &countingSource{src: gen}
	db := openDB(t, src, nil, &Order{}, &Plain{})

	o := Order{Customer: "ada", Amount: 5}
	require.NoError(t, db.Create(&o).Error)
	assert.NotZero(t, o.ID)
	assert.Less(t, o.ID, o.Ref, "one NextN, in field order")
	assert.Equal(t, int64(3), o.ID.Node(gen.Layout()))
	assert.Equal(t, []int{2}, src.Calls())

	var got Order
	require.NoError(t, db.First(&got, "id = ?", o.ID).Error)
	assert.Equal(t, o, got)

	p := Plain{Name: "default tags"}
	require.NoError(t, db.Create(&p).Error)
	var stored Plain
	require.NoError(t, db.Where("name = ?", "default tags").First(&stored).Error)
	assert.Equal(t, p.ID, stored.ID, "the key is ringflake's, not the column's sequence")
	assert.Equal(t, int64(3), stored.ID.Node(gen.Layout()))
}

func TestCreateKeepsGivenKeys(t *testing.T) {
	gen, _ := newGen(t, 3)
	src := &countingSource{src: gen}
	db := openDB(t, src, nil, &Order{})

	given := Order{ID: 42, Ref: 43, Customer: "imported"}
	require.NoError(t, db.Create(&given).Error)
	assert.Equal(t, Order{ID: 42, Ref: 43, Customer: "imported"}, given)
	assert.Empty(t, src.Calls(), "nothing to fill, nothing taken")

	half := []Order{{ID: 44}, {Customer: "new"}}
	require.NoError(t, db.Create(&half).Error)
	assert.Equal(t, ringflake.ID(44), half[0].ID)
	assert.NotZero(t, half[0].Ref)
	assert.NotZero(t, half[1].ID)
	assert.NotZero(t, half[1].Ref)
	assert.Equal(t, []int{3}, src.Calls(), "only the zero fields")
	assert.Equal(t, int64(3), count(t, db, &Order{}))
}

// requireBatch checks that rows were filled with strictly increasing keys
// in row order (ID before Ref in each row) and that the table holds
// exactly their keys.
func requireBatch(t *testing.T, db *gorm.DB, rows []Order) {
	t.Helper()
	keys := make([]ringflake.ID, 0, 2*len(rows))
	for _, o := range rows {
		keys = append(keys, o.ID, o.Ref)
	}
	require.True(t, slices.IsSorted(keys), "keys increase in row order")
	require.Len(t, slices.Compact(slices.Clone(keys)), len(keys), "keys are unique")

	var stored []Order
	require.NoError(t, db.Order("id").Find(&stored).Error)
	require.Len(t, stored, len(rows))
	var distinct int64
	require.NoError(t, db.Raw("SELECT count(DISTINCT id) + count(DISTINCT ref) FROM orders").Scan(&distinct).Error)
	require.Equal(t, int64(2*len(rows)), distinct)
	assert.Equal(t, rows, stored)
}

func TestCreateBatchOf10000(t *testing.T) {
	gen, _ := newGen(t, 7)
	src := &countingSource{src: gen}
	db := openDB(t, src, nil, &Order{})

	rows := make([]Order, 10_000)
	for i := range rows {
		rows[i] = Order{Customer: fmt.Sprint("c", i), Amount: int64(i)}
	}
	res := db.Create(&rows)
	require.NoError(t, res.Error)
	assert.Equal(t, int64(10_000), res.RowsAffected)
	assert.Equal(t, []int{20_000}, src.Calls(), "one NextN for the whole statement")
	requireBatch(t, db, rows)
}

func TestCreateInBatchesOf10000(t *testing.T) {
	gen, _ := newGen(t, 7)
	src := &countingSource{src: gen}
	db := openDB(t, src, nil, &Order{})

	rows := make([]Order, 10_000)
	for i := range rows {
		rows[i] = Order{Customer: fmt.Sprint("c", i), Amount: int64(i)}
	}
	res := db.CreateInBatches(&rows, 1_000)
	require.NoError(t, res.Error)
	assert.Equal(t, int64(10_000), res.RowsAffected)
	assert.Equal(t, slices.Repeat([]int{2_000}, 10), src.Calls(), "one NextN per batch")
	requireBatch(t, db, rows)
}

func TestUpsert(t *testing.T) {
	gen, _ := newGen(t, 2)
	src := &countingSource{src: gen}
	db := openDB(t, src, nil, &Account{})

	first := Account{Email: "a@example.com", Visits: 1}
	require.NoError(t, db.Create(&first).Error)

	// An upsert fills every new row's key; a row that meets an existing
	// one keeps the stored key, and RETURNING tells the caller which.
	upsert := []clause.Expression{
		clause.OnConflict{Columns: []clause.Column{{Name: "email"}}, DoUpdates: clause.AssignmentColumns([]string{"visits"})},
		clause.Returning{Columns: []clause.Column{{Name: "id"}}},
	}
	rows := []Account{{Email: "a@example.com", Visits: 2}, {Email: "b@example.com", Visits: 1}}
	require.NoError(t, db.Clauses(upsert...).Create(&rows).Error)
	assert.Equal(t, []int{1, 2}, src.Calls())
	assert.Equal(t, first.ID, rows[0].ID, "RETURNING gives back the stored key")
	assert.Greater(t, rows[1].ID, first.ID)

	var stored []Account
	require.NoError(t, db.Order("email").Find(&stored).Error)
	assert.Equal(t, []Account{{ID: first.ID, Email: "a@example.com", Visits: 2}, rows[1]}, stored)

	// Save and FirstOrCreate of a new row create it, filled.
	saved := Account{Email: "c@example.com"}
	require.NoError(t, db.Save(&saved).Error)
	assert.NotZero(t, saved.ID)
	var found Account
	require.NoError(t, db.Where(Account{Email: "d@example.com"}).FirstOrCreate(&found).Error)
	assert.Greater(t, found.ID, saved.ID)
	assert.Equal(t, int64(4), count(t, db, &Account{}))
}

func TestCreateWithAssociations(t *testing.T) {
	gen, _ := newGen(t, 1)
	src := &countingSource{src: gen}
	db := openDB(t, src, nil, &Customer{}, &Invoice{})

	c := Customer{Name: "ada", Invoices: []Invoice{{Total: 1}, {Total: 2}, {Total: 3}}}
	require.NoError(t, db.Create(&c).Error)
	assert.Equal(t, []int{1, 3}, src.Calls(), "the customer's statement, then the invoices'")
	require.NotZero(t, c.ID)
	for _, inv := range c.Invoices {
		assert.Greater(t, inv.ID, c.ID)
		assert.Equal(t, c.ID, inv.CustomerID)
	}

	var got Customer
	require.NoError(t, db.Preload("Invoices", func(db *gorm.DB) *gorm.DB { return db.Order("id") }).First(&got, "id = ?", c.ID).Error)
	assert.Equal(t, c, got)
}

// failingCreate is a create that fails when the generator does.
type failingCreate struct {
	name   string
	create func(db *gorm.DB) error
}

func failingCreates() []failingCreate {
	batch := func() []Order {
		rows := make([]Order, 500)
		for i := range rows {
			rows[i].Customer = fmt.Sprint("c", i)
		}
		return rows
	}
	return []failingCreate{
		{"Create one", func(db *gorm.DB) error { return db.Create(&Order{Customer: "one"}).Error }},
		{"Create batch", func(db *gorm.DB) error { rows := batch(); return db.Create(&rows).Error }},
		{"CreateInBatches", func(db *gorm.DB) error { rows := batch(); return db.CreateInBatches(&rows, 100).Error }},
		{"upsert", func(db *gorm.DB) error {
			rows := batch()
			return db.Clauses(clause.OnConflict{UpdateAll: true}).Create(&rows).Error
		}},
		{"Save", func(db *gorm.DB) error { return db.Save(&Order{Customer: "saved"}).Error }},
		{"no default transaction", func(db *gorm.DB) error {
			rows := batch()
			return db.Session(&gorm.Session{SkipDefaultTransaction: true}).Create(&rows).Error
		}},
	}
}

func TestGeneratorFailureWritesNothing(t *testing.T) {
	t.Run("lease lost", func(t *testing.T) {
		lease := &switchLease{node: 4}
		gen, _ := newGen(t, 4, ringflake.WithLease(lease))
		db := openDB(t, gen, nil, &Order{})
		require.NoError(t, db.Create(&Order{Customer: "before"}).Error)
		lease.lose()
		for _, c := range failingCreates() {
			err := c.create(db)
			require.ErrorIs(t, err, ringflake.ErrLeaseLost, c.name)
			assert.Equal(t, int64(1), count(t, db, &Order{}), "%s wrote rows", c.name)
		}
	})
	t.Run("rollback refused", func(t *testing.T) {
		gen, clk := newGen(t, 4, ringflake.WithStrategy(strategies.Error()))
		db := openDB(t, gen, nil, &Order{})
		require.NoError(t, db.Create(&Order{Customer: "before"}).Error)
		clk.Step(-time.Second)
		clk.Add(time.Millisecond) // the generator sees the step from the next tick on
		for _, c := range failingCreates() {
			err := c.create(db)
			require.ErrorIs(t, err, ringflake.ErrClockRollback, c.name)
			var rb *strategies.RollbackError
			require.ErrorAs(t, err, &rb, c.name)
			assert.Equal(t, int64(1), count(t, db, &Order{}), "%s wrote rows", c.name)
		}
	})
	t.Run("closed generator", func(t *testing.T) {
		gen, _ := newGen(t, 4)
		db := openDB(t, gen, nil, &Order{})
		require.NoError(t, gen.Close(context.Background()))
		for _, c := range failingCreates() {
			require.ErrorIs(t, c.create(db), ringflake.ErrClosed, c.name)
			assert.Zero(t, count(t, db, &Order{}), "%s wrote rows", c.name)
		}
	})
}

// loseAfter is a source that loses its generator's lease after a number
// of NextN calls.
type loseAfter struct {
	gen   *ringflake.Generator
	lease *switchLease
	calls int
}

func (l *loseAfter) NextN(ctx context.Context, ids []ringflake.ID) (int, error) {
	if l.calls == 2 {
		l.lease.lose()
	}
	l.calls++
	return l.gen.NextN(ctx, ids)
}

func TestCreateInBatchesFailingMidway(t *testing.T) {
	rows := func() []Order { return make([]Order, 1_000) }

	// In gorm's default transaction, the batches before the failing one
	// roll back with it.
	lease := &switchLease{node: 5}
	gen, _ := newGen(t, 5, ringflake.WithLease(lease))
	src := &loseAfter{gen: gen, lease: lease}
	db := openDB(t, src, nil, &Order{})
	r := rows()
	require.ErrorIs(t, db.CreateInBatches(&r, 100).Error, ringflake.ErrLeaseLost)
	assert.Equal(t, 3, src.calls)
	assert.Zero(t, count(t, db, &Order{}))

	// Without it, each batch is a statement of its own: the failing batch
	// writes nothing, and those before it stay written.
	lease = &switchLease{node: 6}
	gen, _ = newGen(t, 6, ringflake.WithLease(lease))
	src = &loseAfter{gen: gen, lease: lease}
	db = openDB(t, src, &gorm.Config{SkipDefaultTransaction: true}, &Order{})
	r = rows()
	require.ErrorIs(t, db.CreateInBatches(&r, 100).Error, ringflake.ErrLeaseLost)
	assert.Equal(t, int64(200), count(t, db, &Order{}))
}

// A model whose ringflake tags cannot be followed fails its creates.
type (
	FillNotID struct {
		ID   ringflake.ID `gorm:"primaryKey;autoIncrement:false"`
		Code int64        `ringflake:"fill"`
	}
	UnknownTag struct {
		ID ringflake.ID `gorm:"primaryKey;autoIncrement:false" ringflake:"yes"`
	}
	NotFilled struct {
		ID ringflake.ID `gorm:"primaryKey;autoIncrement:false" ringflake:"-"`
		N  int
	}
)

func TestTags(t *testing.T) {
	gen, _ := newGen(t, 1)
	src := &countingSource{src: gen}
	db := openDB(t, src, nil, &FillNotID{}, &UnknownTag{}, &NotFilled{})

	err := db.Create(&FillNotID{}).Error
	require.ErrorIs(t, err, ringflakegorm.ErrInvalidModel)
	var te *ringflakegorm.TagError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, ringflakegorm.TagError{Model: "FillNotID", Field: "Code", Reason: `ringflake:"fill" on a field of type int64; want ringflake.ID`}, *te)
	assert.Zero(t, count(t, db, &FillNotID{}))

	err = db.Create(&[]UnknownTag{{}, {}}).Error
	require.ErrorIs(t, err, ringflakegorm.ErrInvalidModel)
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "ID", te.Field)
	assert.Zero(t, count(t, db, &UnknownTag{}))

	// `ringflake:"-"` leaves the key to the caller.
	require.NoError(t, db.Create(&NotFilled{ID: 9, N: 1}).Error)
	require.NoError(t, db.Create(&NotFilled{N: 2}).Error)
	var keys []ringflake.ID
	require.NoError(t, db.Model(&NotFilled{}).Order("id").Pluck("id", &keys).Error)
	assert.Equal(t, []ringflake.ID{0, 9}, keys)
	assert.Empty(t, src.Calls())
}

func TestNilSource(t *testing.T) {
	db, err := open(serverDSN(t), nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			_ = sqlDB.Close()
		}
	})
	require.ErrorIs(t, db.Use(ringflakegorm.New(nil)), ringflake.ErrInvalidOption)
	var p *ringflakegorm.Plugin
	require.ErrorIs(t, p.Initialize(db), ringflake.ErrInvalidOption)
}

func TestName(t *testing.T) {
	gen, _ := newGen(t, 1)
	assert.Equal(t, "ringflake", ringflakegorm.New(gen).Name())
	var _ gorm.Plugin = ringflakegorm.New(gen)
	assert.True(t, errors.Is(&ringflakegorm.TagError{}, ringflakegorm.ErrInvalidModel))
}
