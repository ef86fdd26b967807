package scenario

// Rapid keeps no fail files in this package's tests: one left in
// testdata/rapid/ would replay first on every later run (internal/rapidtest).
import _ "github.com/leasecheck/leasecheck/internal/rapidtest"
