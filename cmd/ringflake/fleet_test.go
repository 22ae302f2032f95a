package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReplayRunsFleetScenarios(t *testing.T) {
	code, out, errOut := runCLI("replay", "-strict", "-all-strategies", "../../scenarios/fleet/late-save.yaml", "../../scenarios/small-step-back.yaml")
	assert.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "fleet late-save")
	assert.Contains(t, out, "small-step-back")
}

func TestReplayFailsABrokenFleetExpectation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`start: 2026-11-27T12:00:00Z
duration: 2s
fleet:
  nodes: 2
  server: {kind: etcd, ttl: 1s}
  strategy: "ring,wait:5ms,error"
  load: {rate: 1/ms}
expect:
  all: {ids: ">100000"}
`), 0o644))
	code, out, errOut := runCLI("replay", path)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "UNMET ids")
	assert.Contains(t, errOut, "fleet scenarios")
}

func TestReplayNamesABadFleetFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(path, []byte("start: 2026-11-27T12:00:00Z\nduration: 2s\nfleet: {nodes: 2, server: {kind: zookeeper}, strategy: error}\n"), 0o644))
	code, _, errOut := runCLI("replay", path)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "fleet.server.kind")
}

func TestFleetSearch(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI("fleet", "-seeds", "2", "-from", "5", "-out", dir)
	assert.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "seeds 5 to 6: no violation")
	code, _, errOut = runCLI("fleet", "-seeds", "0")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "-seeds 0")
}
