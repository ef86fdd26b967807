package k8ssweep

import (
	"context"
	"fmt"

	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/scenario"
)

// ReplayFile runs a saved scenario file against tg and judges it; a file
// recording another implementation is an error naming both.
func ReplayFile(tg campaign.Target, file string) (*campaign.Outcome, error) {
	sc, err := scenario.Load(file)
	if err != nil {
		return nil, err
	}
	if sc.Implementation != tg.Implementation() {
		return nil, fmt.Errorf("%s: the scenario records implementation %q, the sweep is %q", file, sc.Implementation, tg.Implementation())
	}
	o, err := campaign.Judge(context.Background(), tg, sc, campaign.JudgeOptions{Budget: -1})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return o, nil
}
