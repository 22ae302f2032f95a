package ringflake

import (
	"time"
)

// twitterEpochMilli is the epoch of Twitter's Snowflake,
// 2010-11-04T01:42:54.657Z, in Unix milliseconds.
const twitterEpochMilli = 1288834974657

// TwitterLayout returns Twitter's Snowflake layout, the default: 41 bits of
// milliseconds since 2010-11-04T01:42:54.657Z, 5 bits of datacenter, 5 bits
// of worker, 12 bits of sequence. It runs out in July 2080 (2080-07-10T17:30:30.208Z) and issues
// at most 4,096,000 IDs per second per node, for 1024 nodes.
func TwitterLayout() Layout {
	return mustPreset("twitter", LayoutSpec{Epoch: time.UnixMilli(twitterEpochMilli).UTC(), Unit: time.Millisecond,
		TimeBits: 41, DatacenterBits: 5, WorkerBits: 5, SequenceBits: 12})
}

// sonyflakeTimeBits, sonyflakeSequenceBits and sonyflakeMachineBits are
// Sonyflake's bit widths (v1's only ones, v2's defaults).
const (
	sonyflakeTimeBits     = 39
	sonyflakeSequenceBits = 8
	sonyflakeMachineBits  = 16
)

// SonyflakeLayout returns the layout of Sonyflake (github.com/sony/sonyflake)
// v1, whose IDs it makes and reads bit for bit: 39 bits of 10 ms units
// since 2014-09-01T00:00:00Z, then 8 bits of sequence, then 16 bits of
// machine id as the node ([TimeSequenceNode] order). It lasts 174 years
// (to 2188) and issues at most 25,600 IDs per second per node, for 65,536
// nodes.
//
// Before this layout followed Sonyflake's field order it kept ringflake's
// (time, node, sequence); that layout is still
// "sonyflake,order=time,node,seq".
func SonyflakeLayout() Layout {
	return mustPreset("sonyflake", LayoutSpec{Epoch: time.Date(2014, 9, 1, 0, 0, 0, 0, time.UTC),
		Unit: 10 * time.Millisecond, TimeBits: sonyflakeTimeBits, WorkerBits: sonyflakeMachineBits,
		SequenceBits: sonyflakeSequenceBits, Order: TimeSequenceNode})
}

// SonyflakeV2Layout returns the layout of Sonyflake v2
// (github.com/sony/sonyflake/v2) with its default settings: as
// [SonyflakeLayout] but counting from 2025-01-01T00:00:00Z, v2's default
// start time. It lasts 174 years (to 2199). Sonyflake v2 lets its users
// choose other bit widths, units and start times; a layout string such as
// "sonyflake-v2,unit=1ms,time=41,seq=12,node=10" matches those.
func SonyflakeV2Layout() Layout {
	return mustPreset("sonyflake-v2", LayoutSpec{Epoch: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		Unit: 10 * time.Millisecond, TimeBits: sonyflakeTimeBits, WorkerBits: sonyflakeMachineBits,
		SequenceBits: sonyflakeSequenceBits, Order: TimeSequenceNode})
}

// DiscordLayout returns the layout of Discord's snowflakes: milliseconds
// since 2015-01-01T00:00:00Z, then 5 bits of internal worker id (the
// datacenter here), 5 bits of internal process id (the worker here) and
// 12 bits of sequence ("increment"). Discord documents 42 bits of time,
// the sign bit included; ringflake IDs are never negative, so the time
// has 41 bits and the layout runs out when that bit would be needed, on
// 2084-09-06T15:47:35.551Z. It issues at most 4,096,000 IDs per second per
// node, for 1024 nodes.
func DiscordLayout() Layout {
	return mustPreset("discord", LayoutSpec{Epoch: time.UnixMilli(discordEpochMilli).UTC(), Unit: time.Millisecond,
		TimeBits: 41, DatacenterBits: 5, WorkerBits: 5, SequenceBits: 12})
}

// discordEpochMilli is Discord's epoch, 2015-01-01T00:00:00Z, in Unix
// milliseconds.
const discordEpochMilli = 1420070400000

// JSSafeLayout returns a layout whose IDs stay below 2^53, so JavaScript
// numbers hold them exactly: width 53 with 38 bits of 10 ms units since
// 2025-01-01T00:00:00Z, 7 bits of node, 8 bits of sequence. It lasts about
// 87 years (to 2112) and issues at most 25,600 IDs per second per node, for
// 128 nodes; its ring remembers 2.56 s.
func JSSafeLayout() Layout {
	return mustPreset("js-safe", LayoutSpec{Epoch: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		Unit: 10 * time.Millisecond, TimeBits: 38, WorkerBits: 7, SequenceBits: 8, Width: 53})
}

func mustPreset(name string, spec LayoutSpec) Layout {
	l, err := NewLayout(spec)
	if err != nil { // the presets are constants of this file; a test covers them
		panic(err)
	}
	l.preset = name
	return l
}

// presets returns every preset layout, the default ([TwitterLayout])
// first: twitter, sonyflake, sonyflake-v2, discord, js-safe. [ParseLayout]
// knows each by the name its String returns; package layoutplan lists
// them for the people choosing one (layoutplan.Presets).
func presets() []Layout {
	return []Layout{TwitterLayout(), SonyflakeLayout(), SonyflakeV2Layout(), DiscordLayout(), JSSafeLayout()}
}

// presetNames lists the presets' names for error messages.
const presetNames = "twitter, sonyflake, sonyflake-v2, discord or js-safe"

// presetNamed returns the preset layout called name.
func presetNamed(name string) (Layout, bool) {
	for _, l := range presets() {
		if l.preset == name {
			return l, true
		}
	}
	return Layout{}, false
}
