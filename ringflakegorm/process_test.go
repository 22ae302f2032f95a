package ringflakegorm_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/hostlocal"
	"github.com/ringflake/ringflake/ringflakegorm"
	"github.com/ringflake/ringflake/simclock"
)

// Event is a row written by one goroutine of one process of
// TestTwoProcesses: Seq counts the goroutine's rows in the order their
// creates returned.
type Event struct {
	ID     ringflake.ID `gorm:"primaryKey;autoIncrement:false"`
	Proc   int
	Worker int
	Seq    int
}

// The child processes of TestTwoProcesses are this test binary again,
// told by the environment what to do.
const (
	childEnv      = "RINGFLAKEGORM_TEST_CHILD" // the child's process number
	childDSNEnv   = "RINGFLAKEGORM_TEST_CHILD_DSN"
	childNodesEnv = "RINGFLAKEGORM_TEST_CHILD_NODES" // the directory of node leases
)

const (
	processes = 2
	workers   = 8   // goroutines per process
	singles   = 100 // single-row creates per goroutine
	batches   = 10  // CreateInBatches calls per goroutine, …
	batchRows = 100 // … of this many rows, …
	batchSize = 25  // … in batches of this size
	perWorker = singles + batches*batchRows
)

func TestMain(m *testing.M) {
	if proc := os.Getenv(childEnv); proc != "" {
		if err := child(proc); err != nil {
			fmt.Fprintln(os.Stderr, "child process:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// leaseNode takes a node id that no other process of the host holds,
// leased through lock files in dir, and returns it with the function that
// releases it. It is the tests' only use of host-local node leasing.
func leaseNode(ctx context.Context, dir string, l ringflake.Layout) (node int64, release func() error, err error) {
	src := hostlocal.NewNode(dir)
	node, err = src.NodeID(ctx, l)
	if err != nil {
		return 0, nil, err
	}
	return node, src.Close, nil
}

// child is one process of TestTwoProcesses: it leases a node id, prints
// it, waits for the parent's go-ahead on stdin (so that both processes
// hold their ids at once), then creates its rows from 8 goroutines.
func child(proc string) (err error) {
	p, err := strconv.Atoi(proc)
	if err != nil {
		return fmt.Errorf("%s=%q: %w", childEnv, proc, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	node, release, err := leaseNode(ctx, os.Getenv(childNodesEnv), ringflake.TwitterLayout())
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, release()) }()
	gen, err := ringflake.New(node, ringflake.WithClock(simclock.New(start)))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, gen.Close(context.Background())) }()
	db, err := open(os.Getenv(childDSNEnv), nil)
	if err != nil {
		return err
	}
	if sqlDB, err := db.DB(); err == nil {
		defer sqlDB.Close()
	}
	if err := db.Use(ringflakegorm.New(gen)); err != nil {
		return err
	}

	fmt.Printf("node %d\n", node)
	if line, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil || line != "go\n" {
		return fmt.Errorf("waiting for the go-ahead: read %q, %v", line, err)
	}

	g, ctx := errgroup.WithContext(ctx)
	for w := range workers {
		g.Go(func() error {
			seq := 0
			for i := range singles {
				e := Event{Proc: p, Worker: w, Seq: seq}
				if err := db.WithContext(ctx).Create(&e).Error; err != nil {
					return err
				}
				seq++
				if i%(singles/batches) != 0 {
					continue
				}
				rows := make([]Event, batchRows)
				for j := range rows {
					rows[j] = Event{Proc: p, Worker: w, Seq: seq}
					seq++
				}
				if err := db.WithContext(ctx).CreateInBatches(&rows, batchSize).Error; err != nil {
					return err
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// TestTwoProcesses creates rows from 8 goroutines in each of 2 processes
// at once, each process on a node id leased from the host, and checks
// that every key is unique, carries its process's node id, and that the
// keys of each goroutine increase in the order its creates returned.
func TestTwoProcesses(t *testing.T) {
	dsn := newSchema(t)
	db, err := open(dsn, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			_ = sqlDB.Close()
		}
	})
	require.NoError(t, db.AutoMigrate(&Event{}))
	nodes := t.TempDir()

	type proc struct {
		cmd    *exec.Cmd
		stdin  io.WriteCloser
		stdout *bufio.Reader
		stderr strings.Builder
		node   int64
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	procs := make([]*proc, processes)
	for i := range procs {
		p := &proc{cmd: exec.CommandContext(ctx, os.Args[0])}
		p.cmd.Env = append(os.Environ(),
			fmt.Sprintf("%s=%d", childEnv, i), childDSNEnv+"="+dsn, childNodesEnv+"="+nodes)
		p.stdin, err = p.cmd.StdinPipe()
		require.NoError(t, err)
		out, err := p.cmd.StdoutPipe()
		require.NoError(t, err)
		p.stdout = bufio.NewReader(out)
		p.cmd.Stderr = &p.stderr
		require.NoError(t, p.cmd.Start())
		procs[i] = p
	}
	for i, p := range procs {
		line, err := p.stdout.ReadString('\n')
		require.NoError(t, err, "process %d did not print its node: %s", i, p.stderr.String())
		_, err = fmt.Sscanf(line, "node %d\n", &p.node)
		require.NoError(t, err, "process %d printed %q", i, line)
	}
	require.NotEqual(t, procs[0].node, procs[1].node, "both processes hold their leases at once")
	for _, p := range procs {
		_, err := io.WriteString(p.stdin, "go\n")
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(procs))
	for i, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = io.Copy(io.Discard, p.stdout)
			errs[i] = p.cmd.Wait()
		}()
	}
	wg.Wait()
	for i, p := range procs {
		require.NoError(t, errs[i], "process %d: %s", i, p.stderr.String())
	}

	var total, distinct int64
	require.NoError(t, db.Raw("SELECT count(*), count(DISTINCT id) FROM events").Row().Scan(&total, &distinct))
	require.Equal(t, int64(processes*workers*perWorker), total)
	require.Equal(t, total, distinct, "every key is unique")

	rows, err := db.Model(&Event{}).Order("proc, worker, seq").Rows()
	require.NoError(t, err)
	defer rows.Close()
	layout := ringflake.TwitterLayout()
	var prev Event
	n := 0
	for rows.Next() {
		var e Event
		require.NoError(t, db.ScanRows(rows, &e))
		require.Equal(t, procs[e.Proc].node, e.ID.Node(layout), "key %v of process %d", e.ID, e.Proc)
		if n > 0 && e.Proc == prev.Proc && e.Worker == prev.Worker {
			require.Equal(t, prev.Seq+1, e.Seq)
			require.Greater(t, e.ID, prev.ID, "process %d, goroutine %d, row %d", e.Proc, e.Worker, e.Seq)
		} else {
			require.Zero(t, e.Seq, "process %d, goroutine %d starts at row 0", e.Proc, e.Worker)
		}
		prev = e
		n++
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, int(total), n)
	t.Logf("%d rows from %d processes (nodes %d and %d) × %d goroutines, all keys unique",
		n, processes, procs[0].node, procs[1].node, workers)
}
