package resp

import (
	"cmp"
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Options configure a [Client]. The zero value of each field but Addr is
// a documented default.
type Options struct {
	// Addr is the server's HOST:PORT.
	Addr string
	// Username and Password authenticate with AUTH after each dial, when
	// either is set: AUTH Password, or AUTH Username Password (Redis 6
	// ACL users).
	Username, Password string
	// DB is the database SELECTed after each dial (0: none is).
	DB int
	// TLS, when not nil, makes the client speak TLS (rediss://).
	TLS *tls.Config
	// DialTimeout bounds a dial, with its TLS handshake, AUTH and SELECT
	// (default 5 s); ReadTimeout and WriteTimeout bound reading a reply
	// and writing a command (default 3 s each). A context's deadline that
	// comes earlier bounds them too.
	DialTimeout, ReadTimeout, WriteTimeout time.Duration
	// MaxReply bounds the size of one reply in bytes, roughly (each
	// element of an array counts 16 bytes more), so that a hostile or
	// broken server cannot make the client allocate without bound
	// (default 16 MiB).
	MaxReply int
}

// The defaults of [Options].
const (
	DefaultDialTimeout  = 5 * time.Second
	DefaultReadTimeout  = 3 * time.Second
	DefaultWriteTimeout = 3 * time.Second
	DefaultMaxReply     = 16 << 20
	// DefaultPort is the port of a URL that names none.
	DefaultPort = "6379"
)

// urlOptions are the query parameters ParseURL takes, with go-redis's
// names: the timeouts, in the order of Options' fields.
var urlOptions = []string{"dial_timeout", "read_timeout", "write_timeout"}

// ParseURL returns the Options of a URL of the form
//
//	redis://[[USER]:PASSWORD@]HOST[:PORT][/DB][?dial_timeout=5s&read_timeout=3s&write_timeout=3s]
//
// or rediss://… for TLS (verified against HOST, at least TLS 1.2). The
// port defaults to 6379 and the database to 0. A timeout is a Go duration
// ("500ms") or whole seconds ("5"), as go-redis takes them; other query
// parameters, a fragment or a path that is not a database number are
// errors matching [ErrInvalidOption], each naming what was wrong.
func ParseURL(raw string) (Options, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, which may hold a password
		}
		return Options{}, invalidf("URL: %v", err)
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return Options{}, invalidf("URL scheme %q: want redis:// or rediss://", u.Scheme)
	}
	if u.Fragment != "" {
		return Options{}, invalidf("URL fragment %q: a redis:// URL has none", "#"+u.Fragment)
	}
	host := u.Hostname()
	if host == "" {
		return Options{}, invalidf("URL %q has no host", u.Redacted())
	}
	port := u.Port()
	if port == "" {
		port = DefaultPort
	} else if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return Options{}, invalidf("URL port %q", port)
	}
	o := Options{Addr: net.JoinHostPort(host, port)}
	if u.User != nil {
		o.Username = u.User.Username()
		o.Password, _ = u.User.Password()
	}
	if db := strings.Trim(u.Path, "/"); db != "" {
		if o.DB, err = strconv.Atoi(db); err != nil || o.DB < 0 || strings.Contains(db, "/") {
			return Options{}, invalidf("URL path %q: want /DB, a database number", u.Path)
		}
	}
	if u.Scheme == "rediss" {
		o.TLS = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	}
	q := u.Query()
	for i, to := range []*time.Duration{&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout} {
		name := urlOptions[i]
		v := q.Get(name)
		q.Del(name)
		if v == "" {
			continue
		}
		if *to, err = parseTimeout(v); err != nil {
			return Options{}, invalidf("URL option %s=%q: want a positive duration (500ms, 5s) or whole seconds", name, v)
		}
	}
	if len(q) > 0 {
		return Options{}, invalidf("URL option %q: not supported; resp takes %s", slices.Sorted(maps.Keys(q))[0], strings.Join(urlOptions, ", "))
	}
	return o, nil
}

// parseTimeout parses a positive duration: "500ms", or "5" for seconds.
func parseTimeout(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		var s int64
		if s, err = strconv.ParseInt(v, 10, 32); err == nil {
			d = time.Duration(s) * time.Second
		}
	}
	if err == nil && d <= 0 {
		err = errors.New("not positive")
	}
	return d, err
}

// check validates o and applies the defaults.
func (o Options) check() (Options, error) {
	switch {
	case o.Addr == "":
		return o, invalidf("no Addr")
	case o.DB < 0:
		return o, invalidf("DB %d", o.DB)
	case o.DialTimeout < 0 || o.ReadTimeout < 0 || o.WriteTimeout < 0:
		return o, invalidf("a negative timeout")
	case o.MaxReply < 0:
		return o, invalidf("MaxReply %d", o.MaxReply)
	}
	if _, _, err := net.SplitHostPort(o.Addr); err != nil {
		return o, invalidf("Addr %q: %v", o.Addr, err)
	}
	o.DialTimeout = cmp.Or(o.DialTimeout, DefaultDialTimeout)
	o.ReadTimeout = cmp.Or(o.ReadTimeout, DefaultReadTimeout)
	o.WriteTimeout = cmp.Or(o.WriteTimeout, DefaultWriteTimeout)
	o.MaxReply = cmp.Or(o.MaxReply, DefaultMaxReply)
	return o, nil
}

// invalidf returns an error matching ErrInvalidOption.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidOption, fmt.Sprintf(format, args...))
}
