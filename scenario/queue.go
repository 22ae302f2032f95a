package scenario

import "time"

// The scheduler's queues (see engine.next): the calls due, one stream of
// them per part of the load; the callers asleep, by the instant they wake;
// the idle callers, by number. Each gives its first in O(log n), so that a
// replay takes time in proportion to its calls, whatever the number of
// bursts and callers.

// minHeap is a binary heap of items, the least first.
type minHeap[T any] struct {
	items []T
	less  func(a, b T) bool
}

func (h *minHeap[T]) len() int { return len(h.items) }
func (h *minHeap[T]) top() T   { return h.items[0] }

func (h *minHeap[T]) push(x T) {
	h.items = append(h.items, x)
	h.up(len(h.items) - 1)
}

func (h *minHeap[T]) pop() T {
	top := h.items[0]
	n := len(h.items) - 1
	h.items[0] = h.items[n]
	h.items = h.items[:n]
	if n > 0 {
		h.down(0)
	}
	return top
}

// fixTop restores the order after the first item changed.
func (h *minHeap[T]) fixTop() { h.down(0) }

func (h *minHeap[T]) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(h.items[i], h.items[parent]) {
			return
		}
		h.items[i], h.items[parent] = h.items[parent], h.items[i]
		i = parent
	}
}

func (h *minHeap[T]) down(i int) {
	for {
		least, l, r := i, 2*i+1, 2*i+2
		if l < len(h.items) && h.less(h.items[l], h.items[least]) {
			least = l
		}
		if r < len(h.items) && h.less(h.items[r], h.items[least]) {
			least = r
		}
		if least == i {
			return
		}
		h.items[i], h.items[least] = h.items[least], h.items[i]
		i = least
	}
}

// dueQueue orders the streams of calls by the instant their next call is
// due, the first stream first among equals.
type dueQueue struct {
	streams []stream
	heap    minHeap[int] // indexes of streams with calls left
}

func newDueQueue(streams []stream) *dueQueue {
	q := &dueQueue{streams: streams}
	q.heap.less = func(a, b int) bool {
		sa, sb := &q.streams[a], &q.streams[b]
		return sa.next < sb.next || sa.next == sb.next && a < b
	}
	for i := range q.streams {
		if q.streams[i].advance() {
			q.heap.push(i)
		}
	}
	return q
}

// peek returns the instant the next call is due, or false when none is
// left.
func (q *dueQueue) peek() (time.Duration, bool) {
	if q.heap.len() == 0 {
		return 0, false
	}
	return q.streams[q.heap.top()].next, true
}

// take consumes the next call.
func (q *dueQueue) take() {
	st := &q.streams[q.heap.top()]
	st.i++
	if st.advance() {
		q.heap.fixTop()
	} else {
		q.heap.pop()
	}
}

// sleeper is a caller asleep until at; gen tells a stale entry (the
// caller woke, or a crash ended its call, and it may sleep again).
type sleeper struct {
	at  time.Duration
	w   *worker
	gen uint64
}

func newSleepers() minHeap[sleeper] {
	return minHeap[sleeper]{less: func(a, b sleeper) bool {
		return a.at < b.at || a.at == b.at && a.w.n < b.w.n
	}}
}

func newIdle(n int) minHeap[int] {
	h := minHeap[int]{items: make([]int, n), less: func(a, b int) bool { return a < b }}
	for i := range n {
		h.items[i] = i // in order: a heap already
	}
	return h
}
