package promtext

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// GoRuntime returns a [Source] of the Go runtime's families, under the
// names and types the Go collector of client_golang (v1.23, default
// settings) gives them:
//
//	go_goroutines, go_threads, go_sched_gomaxprocs_threads     gauges
//	go_info{version}                                           gauge, 1
//	go_gc_duration_seconds                                     summary of stop-the-world pauses:
//	                                                           quantiles 0, 0.25, 0.5, 0.75, 1
//	go_gc_gogc_percent, go_gc_gomemlimit_bytes                 gauges
//	go_memstats_last_gc_time_seconds                           gauge (0 before the first GC)
//	go_memstats_{alloc,sys,heap_alloc,heap_sys,heap_idle,heap_inuse,heap_released,
//	  stack_inuse,stack_sys,mspan_inuse,mspan_sys,mcache_inuse,mcache_sys,
//	  buck_hash_sys,gc_sys,other_sys,next_gc}_bytes, go_memstats_heap_objects   gauges
//	go_memstats_alloc_bytes_total, go_memstats_mallocs_total,
//	  go_memstats_frees_total                                  counters
//
// The go_memstats_ families carry the values of the runtime.MemStats
// fields of their names, computed from runtime/metrics (which stops no
// goroutine); the pauses and the last GC come from debug.ReadGCStats.
// Reading them costs a few microseconds per scrape.
func GoRuntime() Source { return goRuntime{} }

type goRuntime struct{}

// memStat is a go_memstats_ family: the sum of runtime/metrics samples,
// less one.
type memStat struct {
	name, help string
	typ        Type
	plus       []string
	minus      string
}

// The runtime/metrics samples the families read.
const (
	rmHeapObjects   = "/memory/classes/heap/objects:bytes"
	rmHeapUnused    = "/memory/classes/heap/unused:bytes"
	rmHeapFree      = "/memory/classes/heap/free:bytes"
	rmHeapReleased  = "/memory/classes/heap/released:bytes"
	rmStacks        = "/memory/classes/heap/stacks:bytes"
	rmAllocObjects  = "/gc/heap/allocs:objects"
	rmFreeObjects   = "/gc/heap/frees:objects"
	rmTinyAllocs    = "/gc/heap/tiny/allocs:objects"
	rmMSpanInuse    = "/memory/classes/metadata/mspan/inuse:bytes"
	rmMCacheInuse   = "/memory/classes/metadata/mcache/inuse:bytes"
	rmGoroutines    = "/sched/goroutines:goroutines"
	rmGOMAXPROCS    = "/sched/gomaxprocs:threads"
	rmGOGC          = "/gc/gogc:percent"
	rmGOMEMLIMIT    = "/gc/gomemlimit:bytes"
	rmAllocBytesSum = "/gc/heap/allocs:bytes"
)

// memStats are the go_memstats_ families, as MemStats defines its fields
// in terms of runtime/metrics.
var memStats = []memStat{
	{"alloc_bytes", "Bytes of allocated heap objects (MemStats.Alloc).", Gauge, []string{rmHeapObjects}, ""},
	{"alloc_bytes_total", "Bytes allocated for heap objects, cumulative (MemStats.TotalAlloc).", Counter, []string{rmAllocBytesSum}, ""},
	{"sys_bytes", "Bytes of memory obtained from the OS (MemStats.Sys).", Gauge, []string{"/memory/classes/total:bytes"}, ""},
	{"mallocs_total", "Heap objects allocated, cumulative (MemStats.Mallocs).", Counter, []string{rmAllocObjects, rmTinyAllocs}, ""},
	{"frees_total", "Heap objects freed, cumulative (MemStats.Frees).", Counter, []string{rmFreeObjects, rmTinyAllocs}, ""},
	{"heap_alloc_bytes", "Bytes of allocated heap objects (MemStats.HeapAlloc).", Gauge, []string{rmHeapObjects}, ""},
	{"heap_sys_bytes", "Bytes of heap memory obtained from the OS (MemStats.HeapSys).", Gauge,
		[]string{rmHeapObjects, rmHeapUnused, rmHeapFree, rmHeapReleased}, ""},
	{"heap_idle_bytes", "Bytes in idle (unused) heap spans (MemStats.HeapIdle).", Gauge, []string{rmHeapFree, rmHeapReleased}, ""},
	{"heap_inuse_bytes", "Bytes in in-use heap spans (MemStats.HeapInuse).", Gauge, []string{rmHeapObjects, rmHeapUnused}, ""},
	{"heap_released_bytes", "Bytes of heap memory returned to the OS (MemStats.HeapReleased).", Gauge, []string{rmHeapReleased}, ""},
	{"heap_objects", "Allocated heap objects (MemStats.HeapObjects).", Gauge, []string{rmAllocObjects}, rmFreeObjects},
	{"stack_inuse_bytes", "Bytes in stack spans (MemStats.StackInuse).", Gauge, []string{rmStacks}, ""},
	{"stack_sys_bytes", "Bytes of stack memory obtained from the OS (MemStats.StackSys).", Gauge,
		[]string{rmStacks, "/memory/classes/os-stacks:bytes"}, ""},
	{"mspan_inuse_bytes", "Bytes of allocated mspan structures (MemStats.MSpanInuse).", Gauge, []string{rmMSpanInuse}, ""},
	{"mspan_sys_bytes", "Bytes of memory obtained from the OS for mspan structures (MemStats.MSpanSys).", Gauge,
		[]string{rmMSpanInuse, "/memory/classes/metadata/mspan/free:bytes"}, ""},
	{"mcache_inuse_bytes", "Bytes of allocated mcache structures (MemStats.MCacheInuse).", Gauge, []string{rmMCacheInuse}, ""},
	{"mcache_sys_bytes", "Bytes of memory obtained from the OS for mcache structures (MemStats.MCacheSys).", Gauge,
		[]string{rmMCacheInuse, "/memory/classes/metadata/mcache/free:bytes"}, ""},
	{"buck_hash_sys_bytes", "Bytes of memory in profiling bucket hash tables (MemStats.BuckHashSys).", Gauge,
		[]string{"/memory/classes/profiling/buckets:bytes"}, ""},
	{"gc_sys_bytes", "Bytes of memory in garbage collection metadata (MemStats.GCSys).", Gauge,
		[]string{"/memory/classes/metadata/other:bytes"}, ""},
	{"other_sys_bytes", "Bytes of memory in other off-heap runtime allocations (MemStats.OtherSys).", Gauge,
		[]string{"/memory/classes/other:bytes"}, ""},
	{"next_gc_bytes", "Heap size the next garbage collection aims for (MemStats.NextGC).", Gauge, []string{"/gc/heap/goal:bytes"}, ""},
}

// goGauges are the go_ gauges read from one runtime/metrics sample each.
var goGauges = []struct{ name, help, sample string }{
	{"go_goroutines", "Goroutines that exist now.", rmGoroutines},
	{"go_sched_gomaxprocs_threads", "GOMAXPROCS: the most OS threads that can run Go code at once.", rmGOMAXPROCS},
	{"go_gc_gogc_percent", "GOGC: the heap growth, in percent, that triggers a garbage collection.", rmGOGC},
	{"go_gc_gomemlimit_bytes", "GOMEMLIMIT: the Go runtime's soft memory limit, in bytes.", rmGOMEMLIMIT},
}

// Descs for the families below, other than the tables above.
var (
	goThreadsDesc = Desc{"go_threads", "OS threads the Go runtime created.", Gauge, nil}
	goInfoDesc    = Desc{"go_info", "The Go version the program was built with, as a label.", Gauge, []string{"version"}}
	goGCDesc      = Desc{"go_gc_duration_seconds", "Stop-the-world pauses of garbage collection cycles.", Summary, nil}
	goLastGCDesc  = Desc{"go_memstats_last_gc_time_seconds", "When the last garbage collection finished (Unix time; 0 before the first).", Gauge, nil}
)

func (goRuntime) Descs() []Desc {
	descs := []Desc{goThreadsDesc, goInfoDesc, goGCDesc, goLastGCDesc}
	for _, g := range goGauges {
		descs = append(descs, Desc{g.name, g.help, Gauge, nil})
	}
	for _, m := range memStats {
		descs = append(descs, Desc{"go_memstats_" + m.name, m.help, m.typ, nil})
	}
	return descs
}

// runtimeSamples returns the names of every runtime/metrics sample the
// families read.
func runtimeSamples() []string {
	names := []string{}
	for _, g := range goGauges {
		names = append(names, g.sample)
	}
	for _, m := range memStats {
		names = append(names, m.plus...)
		if m.minus != "" {
			names = append(names, m.minus)
		}
	}
	return names
}

func (goRuntime) Families() []Family {
	names := runtimeSamples()
	samples := make([]metrics.Sample, len(names))
	for i, n := range names {
		samples[i].Name = n
	}
	metrics.Read(samples)
	value := map[string]float64{}
	for _, s := range samples {
		switch s.Value.Kind() {
		case metrics.KindUint64:
			value[s.Name] = float64(s.Value.Uint64())
		case metrics.KindFloat64:
			value[s.Name] = s.Value.Float64()
		}
	}
	gauge := func(d Desc, v float64, labels ...string) Family {
		return Family{Desc: d, Series: []Series{{Labels: seriesLabels(nil, d.Labels, labels), Value: v}}}
	}
	threads, _ := runtime.ThreadCreateProfile(nil)
	var gc debug.GCStats
	gc.PauseQuantiles = make([]time.Duration, 5)
	debug.ReadGCStats(&gc)
	pauses := Series{Count: uint64(gc.NumGC), Sum: gc.PauseTotal.Seconds()}
	for i, q := range gc.PauseQuantiles {
		pauses.Quantiles = append(pauses.Quantiles, Quantile{float64(i) / 4, q.Seconds()})
	}
	lastGC := 0.0
	if !gc.LastGC.IsZero() {
		lastGC = float64(gc.LastGC.UnixNano()) / 1e9
	}
	families := []Family{
		gauge(goThreadsDesc, float64(threads)),
		gauge(goInfoDesc, 1, runtime.Version()),
		{Desc: goGCDesc, Series: []Series{pauses}},
		gauge(goLastGCDesc, lastGC),
	}
	for _, g := range goGauges {
		if v, ok := value[g.sample]; ok {
			families = append(families, gauge(Desc{g.name, g.help, Gauge, nil}, v))
		}
	}
	for _, m := range memStats {
		sum, ok := 0.0, true
		for _, n := range m.plus {
			v, found := value[n]
			sum, ok = sum+v, ok && found
		}
		if m.minus != "" {
			v, found := value[m.minus]
			sum, ok = sum-v, ok && found
		}
		if ok {
			families = append(families, gauge(Desc{"go_memstats_" + m.name, m.help, m.typ, nil}, sum))
		}
	}
	return families
}
