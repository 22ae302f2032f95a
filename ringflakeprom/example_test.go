package ringflakeprom_test

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/ringflakeprom"
	"github.com/ringflake/ringflake/simclock"
)

func ExampleNewCollector() {
	clk := simclock.New(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)) // leave out for the system clock
	gen, _ := ringflake.New(3, ringflake.WithClock(clk))
	for range 3 {
		_, _ = gen.Next()
	}

	c, err := ringflakeprom.NewCollector(gen, prometheus.Labels{"node": "3"})
	if err != nil {
		panic(err)
	}
	reg := prometheus.NewRegistry() // or prometheus.DefaultRegisterer
	reg.MustRegister(c)

	families, _ := reg.Gather()
	for _, f := range families {
		if f.GetName() == "ringflake_ids_issued_total" {
			m := f.GetMetric()[0]
			fmt.Println(f.GetName(), m.GetLabel()[0].GetValue(), m.GetCounter().GetValue())
		}
	}
	// Output: ringflake_ids_issued_total 3 3
}
