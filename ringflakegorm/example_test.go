package ringflakegorm_test

import (
	"context"
	"errors"
	"log"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/ringflakegorm"
)

// A service registers the plugin once, with its one generator; creates
// then fill the keys.
func ExampleNew() {
	ctx := context.Background()
	gen, err := ringflake.New(7) // a node id no other live process holds
	if err != nil {
		log.Fatal(err)
	}
	defer gen.Close(ctx)
	db, err := gorm.Open(postgres.Open("postgres://app@127.0.0.1/app"), &gorm.Config{})
	if err != nil {
		log.Fatal(err)
	}
	if err := db.Use(ringflakegorm.New(gen)); err != nil {
		log.Fatal(err)
	}

	type Order struct {
		ID     ringflake.ID `gorm:"primaryKey;autoIncrement:false"`
		Amount int64
	}
	o := Order{Amount: 5}
	err = db.WithContext(ctx).Create(&o).Error
	switch {
	case errors.Is(err, ringflake.ErrLeaseLost), errors.Is(err, ringflake.ErrClockRollback):
		log.Print("no ID now, nothing written: ", err)
	case err != nil:
		log.Fatal(err)
	default:
		log.Print("created order ", o.ID)
	}
}
