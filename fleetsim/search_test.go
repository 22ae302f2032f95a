package fleetsim

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSearchOnMain(t *testing.T) {
	n := uint64(30)
	if testing.Short() {
		n = 5
	}
	f, err := Search(context.Background(), 1, n, nil)
	require.NoError(t, err)
	if f != nil {
		f.Shrunk.WriteTo(os.Stdout)
		fmt.Println(f.SReport)
	}
	require.Nil(t, f)
}
