package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/opaque"
)

// opaqueKeyEnv names the variable that holds the keys of -format opaque
// when -key-file is not given. Keys never come from a flag's value, which
// other users of the host can read in the process list.
const opaqueKeyEnv = "RINGFLAKE_OPAQUE_KEY"

// The -format names of opaque public IDs: the text form, and the public
// number in decimal.
const (
	opaqueText   = "opaque"
	opaqueNumber = "opaque-number"
)

// opaqueFlags are the flags of gen and parse for -format opaque.
type opaqueFlags struct {
	keyFile, tweak *string
}

func addOpaqueFlags(fs *flag.FlagSet) opaqueFlags {
	return opaqueFlags{
		keyFile: fs.String("key-file", "", "with -format opaque or opaque-number: a file holding the keys, VERSION:BASE64,...\n"+
			"the first encodes (default: $"+opaqueKeyEnv+")"),
		tweak: fs.String("tweak", "", "with -format opaque or opaque-number: the tweak of the IDs' type, such as order_"),
	}
}

// format returns the idFormat of the -format value s when it names an
// opaque form, and whether it does. It reads the keys from -key-file or
// the environment.
func (o opaqueFlags) format(s string) (idFormat, bool, error) {
	if s != opaqueText && s != opaqueNumber {
		if *o.keyFile != "" || *o.tweak != "" {
			return idFormat{}, false, fmt.Errorf("-key-file and -tweak go with -format %s or %s only", opaqueText, opaqueNumber)
		}
		return idFormat{}, false, nil
	}
	var keys string
	if *o.keyFile != "" {
		b, err := os.ReadFile(*o.keyFile)
		if err != nil {
			return idFormat{}, true, fmt.Errorf("-key-file: %w", err)
		}
		keys = string(b)
	} else {
		keys = os.Getenv(opaqueKeyEnv)
		if strings.TrimSpace(keys) == "" {
			return idFormat{}, true, fmt.Errorf("-format %s needs keys: set %s=VERSION:BASE64[,VERSION:BASE64...] or give -key-file FILE", s, opaqueKeyEnv)
		}
	}
	ks, err := opaque.ParseKeys(keys)
	if err != nil {
		return idFormat{}, true, err
	}
	c, err := opaque.New(ks, *o.tweak)
	if err != nil {
		return idFormat{}, true, err
	}
	return idFormat{opaque: c, number: s == opaqueNumber}, true, nil
}

// appendOpaque appends id's public ID, as text or as its number.
func (f idFormat) appendOpaque(dst []byte, id ringflake.ID) ([]byte, error) {
	if !f.number {
		return f.opaque.AppendText(dst, id)
	}
	n, err := f.opaque.Encode(id)
	return strconv.AppendInt(dst, n, 10), err
}

// parseOpaque reads a public ID, as text or as its number in decimal.
func (f idFormat) parseOpaque(s string) (ringflake.ID, error) {
	if !f.number {
		return f.opaque.Parse(s)
	}
	n, err := ringflake.Parse(s) // 1 to 19 digits, at most 2^63-1
	if err != nil {
		return 0, err
	}
	return f.opaque.Decode(int64(n))
}
