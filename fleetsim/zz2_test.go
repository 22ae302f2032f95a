package fleetsim

import (
	"context"
	"os"
	"testing"
)

func TestZZTrace(t *testing.T) {
	p := os.Getenv("ZZF")
	if p == "" {
		t.Skip()
	}
	s, err := ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), s, WithTrace(os.Stdout))
	if err != nil {
		t.Fatal(err)
	}
	t.Log(r)
}
