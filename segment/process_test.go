package segment_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/segment"
)

// childEnv, when set, makes the test binary a child process of
// TestManyProcesses: it holds the childSpec, as JSON.
const childEnv = "RINGFLAKE_SEGMENT_CHILD"

// childSpec is what one child process does: goroutines × count numbers
// from an allocator of tag, written to out.
type childSpec struct {
	Tag        string
	Out        string
	MaxStep    int64
	Goroutines int
	Count      int
}

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		if err := runChild(spec); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestManyProcesses: 8 processes (this test binary run again) × 8
// goroutines × 100,000 numbers of one tag, taken one at a time or in
// batches, from allocators whose steps grow to different maxima. Every
// number comes once; each goroutine's numbers are strictly increasing;
// and every number the row gave out was issued or left in a buffer when
// its process ended.
func TestManyProcesses(t *testing.T) {
	const processes, goroutines, count = 8, 8, 100_000
	db := sharedDB(t)
	tag := newTag(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a hang guard
	defer cancel()
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, processes)
	for p := range processes {
		spec, err := json.Marshal(childSpec{Tag: tag, Out: filepath.Join(dir, fmt.Sprint(p)),
			MaxStep: 1000 << (p % 4), Goroutines: goroutines, Count: count})
		require.NoError(t, err)
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+string(spec))
		var stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stderr, &stderr
		require.NoError(t, cmd.Start())
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := cmd.Wait(); err != nil {
				errs[p] = fmt.Errorf("process %d: %w\n%s", p, err, stderr.String())
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}

	maxID, _ := row(t, db, tag)
	var issued, left int64
	seen := make([]uint64, maxID/64+1) // a bit per number the row handed out: 800 kB, where sorting 6.4M numbers under -race takes 20 s
	for p := range processes {
		l, perGoroutine := readChild(t, filepath.Join(dir, fmt.Sprint(p)))
		left += l
		require.Len(t, perGoroutine, goroutines, "process %d", p)
		for g, nums := range perGoroutine {
			require.Len(t, nums, count, "process %d goroutine %d", p, g)
			prev := int64(0)
			for _, v := range nums {
				if v <= prev || v >= maxID || seen[v/64]&(1<<(v%64)) != 0 {
					t.Fatalf("process %d goroutine %d: %d after %d: not increasing, past max_id %d, or seen before", p, g, v, prev, maxID)
				}
				seen[v/64] |= 1 << (v % 64)
				prev = v
			}
			issued += int64(len(nums))
		}
	}
	require.Equal(t, maxID-1, issued+left, "numbers issued, and left in the buffers at the end")
}

// runChild is a child process of TestManyProcesses.
func runChild(specJSON string) error {
	var spec childSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		return err
	}
	dsn := os.Getenv(dsnEnv)
	if dsn == "" {
		return fmt.Errorf("%s is not set", dsnEnv)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx := context.Background()
	// A mock clock that never moves: every range seems to last no time,
	// so the step doubles up to the maximum.
	a, err := segment.New(ctx, db, spec.Tag, segment.WithStep(1000), segment.WithMaxStep(spec.MaxStep), segment.WithClock(clock.NewMock()))
	if err != nil {
		return err
	}
	defer a.Close()
	nums := make([][]int64, spec.Goroutines)
	errs := make([]error, spec.Goroutines)
	var wg sync.WaitGroup
	for g := range spec.Goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nums[g], errs[g] = childNumbers(ctx, a, g, spec.Count)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	// Wait for a prefetch still running, so that Left counts its range.
	for deadline := time.Now().Add(time.Minute); a.Stats().Loading; runtime.Gosched() {
		if time.Now().After(deadline) {
			return fmt.Errorf("a load still runs after a minute")
		}
	}
	return writeChild(spec.Out, a.Stats().Left, nums)
}

// childNumbers takes count numbers: with Next when g is a multiple of 3,
// else in batches of g.
func childNumbers(ctx context.Context, a *segment.Allocator, g, count int) ([]int64, error) {
	nums := make([]int64, 0, count)
	if g%3 == 0 {
		for range count {
			v, err := a.Next(ctx)
			if err != nil {
				return nil, err
			}
			nums = append(nums, v)
		}
		return nums, nil
	}
	batch := make([]int64, g)
	for len(nums) < count {
		n, err := a.NextN(ctx, batch[:min(g, count-len(nums))])
		if err != nil {
			return nil, err
		}
		nums = append(nums, batch[:n]...)
	}
	return nums, nil
}

// writeChild writes left, then each goroutine's count and numbers, as
// little-endian int64s.
func writeChild(path string, left int64, nums [][]int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	_ = binary.Write(w, binary.LittleEndian, left)
	for _, ns := range nums {
		_ = binary.Write(w, binary.LittleEndian, int64(len(ns)))
		_ = binary.Write(w, binary.LittleEndian, ns)
	}
	if err := w.Flush(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// readChild reads what writeChild wrote.
func readChild(t *testing.T, path string) (left int64, nums [][]int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Zero(t, len(b)%8, "%s: not a whole number of int64s", path)
	words := make([]int64, len(b)/8)
	for i := range words {
		words[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	require.NotEmpty(t, words, "%s is empty", path)
	left, words = words[0], words[1:]
	for len(words) > 0 {
		n := words[0]
		require.LessOrEqual(t, n, int64(len(words)-1), "%s is cut short", path)
		nums, words = append(nums, words[1:1+n]), words[1+n:]
	}
	return left, nums
}
