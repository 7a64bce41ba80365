package urls

// HoldsStrings exposes holdsStrings to the external tests.
var HoldsStrings = holdsStrings
