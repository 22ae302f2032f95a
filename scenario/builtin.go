package scenario

import "github.com/ringflake/ringflake/strategies"

// Builtin returns the strategies `ringflake replay --all-strategies`
// replays, besides those a file has expectations for: error, wait:5ms,
// logical:1s, ring and the default chain ring,wait:5ms,error.
func Builtin() []strategies.Strategy {
	return []strategies.Strategy{
		strategies.Error(),
		strategies.Wait(strategies.DefaultWait),
		strategies.Logical(strategies.DefaultLead),
		strategies.Ring(),
		strategies.Default(),
	}
}
