package ctrlruntime

import "github.com/leasecheck/leasecheck/internal/k8ssweep"

// leasecheck's own commands (docs/) give this binary -seeds, -profile,
// -save and -scenario by their short names.
func init() { k8ssweep.ShortFlags() }
