// Package ringflakegorm fills primary keys with ringflake IDs where a
// service creates rows through gorm (gorm.io/gorm), with any of its
// drivers: PostgreSQL, MySQL, SQLite.
//
// Register the plugin once, with the process's one generator, and give
// models a key of type [ringflake.ID]:
//
//	type Order struct {
//		ID     ringflake.ID `gorm:"primaryKey;autoIncrement:false"`
//		Ref    ringflake.ID `gorm:"uniqueIndex" ringflake:"fill"` // a second key, filled too
//		Amount int64
//	}
//
//	gen, err := ringflake.New(node) // node: leased, see ringflake.NodeSource
//	…
//	if err := db.Use(ringflakegorm.New(gen)); err != nil { … }
//	db.Create(&Order{Amount: 5})     // Order.ID and Order.Ref are set
//	db.CreateInBatches(orders, 1000) // one NextN per batch of 1,000
//
// gorm takes an integer primary key for an auto-increment column unless
// told otherwise: `autoIncrement:false` keeps AutoMigrate from giving the
// column a sequence (bigserial) it never uses. The plugin fills the key
// either way.
//
// A create whose IDs cannot be issued — the generator's lease is lost,
// its strategy refuses a clock rollback, it is closed — fails with the
// generator's error (match it with [errors.Is]) and writes nothing.
//
// The module is separate from ringflake's, so that only services that use
// gorm build gorm.
//
// ringflake is licensed under the Apache License 2.0: see LICENSE at the
// root of the repository.
package ringflakegorm
