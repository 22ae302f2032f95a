package main

import (
	"fmt"
	"io"
	"runtime/debug"
)

// version prints the module version of this binary and the Go it was
// built with, and the commit when the build recorded one.
func version(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("version takes no arguments, got %q", fs.Args())
	}
	fmt.Fprintln(stdout, versionLine())
	return nil
}

// versionLine says "ringflake VERSION (GO[, commit REV])": VERSION is the
// module's version as go install recorded it, "(devel)" for a build in a
// checkout.
func versionLine() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "ringflake (unknown version)"
	}
	line := fmt.Sprintf("ringflake %s (%s", info.Main.Version, info.GoVersion)
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			line += ", commit " + s.Value[:12]
		}
	}
	return line + ")"
}
