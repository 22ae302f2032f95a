package promtext

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Process returns a [Source] of the process's families, under the names
// and types the process collector of client_golang (v1.23) gives them,
// read from Linux's /proc at each scrape:
//
//	process_cpu_seconds_total             counter  user and system CPU time (/proc/self/stat)
//	process_resident_memory_bytes         gauge    resident set size (/proc/self/stat)
//	process_virtual_memory_bytes          gauge    virtual memory size (/proc/self/stat)
//	process_start_time_seconds            gauge    Unix time (/proc/self/stat and /proc/stat's btime)
//	process_open_fds                      gauge    entries of /proc/self/fd
//	process_max_fds                       gauge    soft limit of open files (/proc/self/limits)
//	process_virtual_memory_max_bytes      gauge    soft limit of the address space (/proc/self/limits;
//	                                               unlimited is 2^64-1)
//	process_network_receive_bytes_total   counter  IP bytes received in the process's network
//	process_network_transmit_bytes_total  counter  namespace and sent (/proc/self/net/netstat)
//
// CPU time and the start time count clock ticks of 1/100 s, Linux's
// USER_HZ everywhere Go runs. A family whose file cannot be read or
// parsed is left out of that scrape, as all of them are where there is
// no /proc (other systems).
func Process() Source { return process{dir: "/proc"} }

type process struct{ dir string }

var (
	procCPUDesc      = Desc{"process_cpu_seconds_total", "User and system CPU time the process used, in seconds.", Counter, nil}
	procRSSDesc      = Desc{"process_resident_memory_bytes", "Resident memory size of the process, in bytes.", Gauge, nil}
	procVSizeDesc    = Desc{"process_virtual_memory_bytes", "Virtual memory size of the process, in bytes.", Gauge, nil}
	procStartDesc    = Desc{"process_start_time_seconds", "When the process started (Unix time).", Gauge, nil}
	procOpenFDsDesc  = Desc{"process_open_fds", "File descriptors the process has open.", Gauge, nil}
	procMaxFDsDesc   = Desc{"process_max_fds", "Most file descriptors the process may open (soft limit).", Gauge, nil}
	procMaxVSizeDesc = Desc{"process_virtual_memory_max_bytes", "Most virtual memory the process may map, in bytes (soft limit).", Gauge, nil}
	procNetInDesc    = Desc{"process_network_receive_bytes_total", "Bytes received over IP in the process's network namespace.", Counter, nil}
	procNetOutDesc   = Desc{"process_network_transmit_bytes_total", "Bytes sent over IP in the process's network namespace.", Counter, nil}
)

// userHZ is the unit of the times in /proc/PID/stat: 1/100 s.
const userHZ = 100

func (process) Descs() []Desc {
	return []Desc{procCPUDesc, procRSSDesc, procVSizeDesc, procStartDesc, procOpenFDsDesc, procMaxFDsDesc, procMaxVSizeDesc,
		procNetInDesc, procNetOutDesc}
}

func (p process) Families() []Family {
	var families []Family
	add := func(d Desc, v float64) {
		families = append(families, Family{Desc: d, Series: []Series{{Value: v}}})
	}
	if b, err := os.ReadFile(filepath.Join(p.dir, "self", "stat")); err == nil {
		if st, ok := parseStat(string(b)); ok {
			add(procCPUDesc, float64(st.utime+st.stime)/userHZ)
			add(procRSSDesc, float64(st.rss)*float64(os.Getpagesize()))
			add(procVSizeDesc, float64(st.vsize))
			if boot, ok := p.bootTime(); ok {
				add(procStartDesc, float64(boot)+float64(st.start)/userHZ)
			}
		}
	}
	if fds, err := os.ReadDir(filepath.Join(p.dir, "self", "fd")); err == nil {
		add(procOpenFDsDesc, float64(len(fds)))
	}
	if b, err := os.ReadFile(filepath.Join(p.dir, "self", "limits")); err == nil {
		if v, ok := softLimit(string(b), "Max open files"); ok {
			add(procMaxFDsDesc, v)
		}
		if v, ok := softLimit(string(b), "Max address space"); ok {
			add(procMaxVSizeDesc, v)
		}
	}
	if b, err := os.ReadFile(filepath.Join(p.dir, "self", "net", "netstat")); err == nil {
		ip := netstat(b, "IpExt")
		if v, ok := ip["InOctets"]; ok {
			add(procNetInDesc, v)
		}
		if v, ok := ip["OutOctets"]; ok {
			add(procNetOutDesc, v)
		}
	}
	return families
}

// procStat is what the families read from /proc/PID/stat.
type procStat struct {
	utime, stime, start uint64 // clock ticks
	vsize, rss          uint64 // bytes, pages
}

// parseStat parses the one line of /proc/PID/stat. The command name,
// the second field, is in parentheses and may hold spaces and
// parentheses itself: the fields after it start after the last ')'.
func parseStat(line string) (procStat, bool) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return procStat{}, false
	}
	// proc(5) numbers the fields from 1: field 3 (state) is f[0], and
	// the last one read, 24 (rss), f[21].
	f := strings.Fields(line[i+1:])
	if len(f) < 22 {
		return procStat{}, false
	}
	ok := true
	field := func(n int) uint64 {
		v, err := strconv.ParseUint(f[n-3], 10, 64)
		ok = ok && err == nil
		return v
	}
	st := procStat{utime: field(14), stime: field(15), start: field(22), vsize: field(23), rss: field(24)}
	return st, ok
}

// bootTime returns the btime line of /proc/stat: when the system booted,
// in Unix seconds.
func (p process) bootTime() (uint64, bool) {
	f, err := os.Open(filepath.Join(p.dir, "stat"))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "btime "); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// softLimit returns the soft limit of the line of /proc/PID/limits that
// starts with name; "unlimited" is 2^64-1.
func softLimit(limits, name string) (float64, bool) {
	for line := range strings.Lines(limits) {
		rest, ok := strings.CutPrefix(line, name+" ")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0, false
		}
		if f[0] == "unlimited" {
			return math.MaxUint64, true
		}
		v, err := strconv.ParseUint(f[0], 10, 64)
		return float64(v), err == nil
	}
	return 0, false
}

// netstat returns the counters of one section of /proc/PID/net/netstat,
// where a line "Section: Name1 Name2 …" is followed by a line
// "Section: value1 value2 …".
func netstat(b []byte, section string) map[string]float64 {
	prefix := []byte(section + ":")
	var names []string
	for line := range bytes.Lines(b) {
		rest, ok := bytes.CutPrefix(line, prefix)
		if !ok {
			continue
		}
		fields := strings.Fields(string(rest))
		if names == nil {
			names = fields
			continue
		}
		out := map[string]float64{}
		for i, v := range fields {
			if n, err := strconv.ParseFloat(v, 64); err == nil && i < len(names) {
				out[names[i]] = n
			}
		}
		return out
	}
	return nil
}
