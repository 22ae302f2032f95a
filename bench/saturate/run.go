// Package saturate measures ID generators at and around their capacity:
// IDs per second over a fixed window, CPU time per ID, and the latency of
// single calls under bursts. cmd/saturate prints its tables; the math it
// reports with (percentiles, rates) lives in stats.go and is tested.
package saturate

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// An Issuer issues one ID. It must be safe for concurrent use.
type Issuer func() error

// RunThroughput calls issue from the given number of goroutines as fast as
// they can for window and returns how many IDs were issued before the
// window closed and the CPU time the process used meanwhile (from
// [ProcessCPU]). It returns the first error an issue returned.
//
// The window is measured, not assumed: it runs from the start signal to
// the moment the goroutines are told to stop, and a call that ends after
// the stop signal is not counted, so an oversleep of the main goroutine
// or a call still waiting for the next tick do not skew the rate.
func RunThroughput(issue Issuer, goroutines int, window time.Duration) (Throughput, error) {
	var (
		stop   atomic.Bool
		wg     sync.WaitGroup
		start  = make(chan struct{})
		counts = make([]int64, goroutines)
		errs   = make([]error, goroutines)
	)
	for i := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			var n int64
			for !stop.Load() {
				if err := issue(); err != nil {
					errs[i] = err
					break
				}
				if stop.Load() {
					break // ended after the window closed: not counted
				}
				n++
			}
			counts[i] = n
		}()
	}
	runtime.GC()
	cpu0, err := ProcessCPU()
	if err != nil {
		return Throughput{}, err
	}
	t0 := time.Now()
	close(start)
	time.Sleep(window)
	stop.Store(true)
	elapsed := time.Since(t0)
	wg.Wait()
	cpu1, err := ProcessCPU()
	if err != nil {
		return Throughput{}, err
	}
	t := Throughput{Elapsed: elapsed, CPU: cpu1 - cpu0}
	for _, n := range counts {
		t.IDs += n
	}
	return t, errors.Join(errs...)
}

// Bursts describes a bursty load: every Period, Size IDs are issued back
// to back, split evenly between Goroutines, Count times.
type Bursts struct {
	Period     time.Duration
	Size       int
	Count      int
	Goroutines int
}

// RunBursts plays b against issue and returns the latency of every single
// call, timed with the monotonic clock around the call. The bursts follow
// a fixed schedule from the start; a burst that overruns its period makes
// the next one start late rather than be skipped.
func RunBursts(issue Issuer, b Bursts) ([]time.Duration, error) {
	share := b.Size / b.Goroutines
	samples := make([]time.Duration, share*b.Goroutines*b.Count)
	errs := make([]error, b.Goroutines)
	var wg sync.WaitGroup
	runtime.GC()
	base := time.Now()
	first := 10 * time.Millisecond // let every goroutine reach its first sleep
	for g := range b.Goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := samples[g*share*b.Count : (g+1)*share*b.Count]
			i := 0
			for k := range b.Count {
				if d := first + time.Duration(k)*b.Period - time.Since(base); d > 0 {
					time.Sleep(d)
				}
				for range share {
					t0 := time.Since(base)
					if err := issue(); err != nil {
						errs[g] = err
						return
					}
					out[i] = time.Since(base) - t0
					i++
				}
			}
		}()
	}
	wg.Wait()
	return samples, errors.Join(errs...)
}
