//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"bufio"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gen | head -2: a reader that goes away after two lines is a clean stop.
// gen exits 0 without a word and saves the exact mark (Since = Limit, as
// only a clean close writes it), so the next start does not wait out a
// reservation.
func TestGenIntoAClosedPipe(t *testing.T) {
	state := filepath.Join(t.TempDir(), "node.mark")
	cmd := command(t, "gen", "-n", "1000000000000", "-node", "4", "-state", state)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	p := &cliProcess{cmd: cmd}
	cmd.Stderr = &p.errOut
	require.NoError(t, cmd.Start())
	t.Cleanup(p.stop)
	r := bufio.NewReader(stdout)
	for range 2 {
		_, err := r.ReadString('\n')
		require.NoError(t, err)
	}
	require.NoError(t, stdout.Close())
	require.Equal(t, 0, p.wait(t), p.errOut.String())
	assert.Empty(t, p.errOut.String())
	m := loadMark(t, state)
	require.False(t, m.Limit.IsZero())
	assert.Equal(t, m.Limit, m.Since, "the exact mark of a clean close, not a reservation")
}
