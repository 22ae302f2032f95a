package ringflake

// Presets is presets, for the tests of package ringflake_test that check
// layoutplan.Presets lists the same layouts.
var Presets = presets
