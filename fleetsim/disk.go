package fleetsim

import (
	"context"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/internal/simhook"
)

// A node of a fleet with `marks: file` keeps its generator's high-water
// mark in a mark file on its host's disk, as hostlocal.MarkFile does,
// under the node id it claims (the node's number): the lease guards the
// id, and the mark stays on the host. The file here is modelled in
// memory. hostlocal.MarkFile.SaveMark writes a temporary file, syncs it,
// renames it over the mark file and syncs the directory before it
// returns; the model's save takes fileSync of the host's time for that,
// and its mark is on the disk when the save returns. A crash — in a
// fleet with mark files, the host's crash: a power loss or a kernel
// panic, which loses what the kernel had not written back — keeps the
// mark of the last save that returned: a save in flight is lost (a crash
// before the rename or the directory's sync leaves the old file). A lost
// disk (`lose-disk`) crashes the host, which comes back with an empty
// disk: no mark.

// fileSync is how long a mark file's save takes: two fsyncs.
const fileSync = 2 * time.Millisecond

// writeback is how long the kernel keeps a written page before it writes
// it back to the disk: the window in which a crash loses a write that
// was not synced (the injected bug unsyncedMarks).
const writeback = 5 * time.Second

// A disk is a node's mark file as the disk and the kernel hold it.
type disk struct {
	mark    ringflake.Mark // on the disk
	pending []pendingWrite // written, not yet on the disk (unsyncedMarks only)
}

type pendingWrite struct {
	at   time.Duration
	mark ringflake.Mark
}

// read returns the file as a process reads it: through the kernel's
// cache.
func (d *disk) read() ringflake.Mark {
	if n := len(d.pending); n > 0 {
		return d.pending[n-1].mark
	}
	return d.mark
}

// crash returns what a crash at now leaves on the disk: the writes the
// kernel had written back by then, and drops the others.
func (d *disk) crash(now time.Duration) {
	for _, w := range d.pending {
		if w.at <= now-writeback {
			d.mark = w.mark
		}
	}
	d.pending = nil
}

// markFile is the ringflake.MarkStore of a process with a mark file.
type markFile struct{ inc *incarnation }

var _ ringflake.MarkStore = markFile{}

func (f markFile) Sim() simhook.Runner { return runner(f) }

func (f markFile) String() string { return f.inc.node.name() + " mark file" }

// LoadMark reads the file.
func (f markFile) LoadMark(ctx context.Context) (ringflake.Mark, error) {
	if f.inc.dead {
		return ringflake.Mark{}, errDead
	}
	return f.inc.node.disk.read(), nil
}

// SaveMark replaces the file with m, durably: it returns after the
// syncs, and a crash before then keeps the old mark. With the injected
// bug unsyncedMarks it returns once m is written, unsynced.
func (f markFile) SaveMark(ctx context.Context, m ringflake.Mark) error {
	inc := f.inc
	n := inc.node
	sim := n.sim
	if sim.faults.unsyncedMarks {
		if inc.dead {
			return errDead
		}
		n.disk.pending = append(n.disk.pending, pendingWrite{at: sim.w.now, mark: m})
		return nil
	}
	if p := sim.w.cur; p != nil {
		p.sleep(fileSync)
	}
	if inc.dead {
		return errDead
	}
	closing := inc.gen != nil && inc.hold != nil && (inc.hold.lost || inc.stop) // Close's exact mark
	sim.check.fileWrite(n, n.disk.mark, m, closing)
	n.disk.mark = m
	sim.trace(n.name(), "mark file saved limit=%s", stamp(m.Limit))
	return nil
}

// guardLease is the lease of a process with a mark file: the id it
// claimed and whether it holds it; the mark is the file's, not the
// lease's.
type guardLease struct{ h *holding }

func (l guardLease) Node() int64            { return l.h.id }
func (l guardLease) Held() bool             { return (&simLease{h: l.h}).Held() }
func (l guardLease) MaxLead() time.Duration { return l.h.drv.MaxLead() }

// loseDisk crashes the host, which comes back with an empty disk.
func (n *node) loseDisk() {
	n.crash(true)
	n.disk = disk{}
	n.sim.check.diskLost(n)
}
