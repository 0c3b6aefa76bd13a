package soak_test

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

var (
	flagSeed        = flag.Uint64("soak.seed", 0, "seed of the fault generator (0: $MCPSUP_SOAK_SEED, else the clock)")
	flagDuration    = flag.Duration("soak.duration", 0, "how long faults are injected (0: $MCPSUP_SOAK_DURATION, else 20s, 5s with -short)")
	flagSupervisors = flag.Int("soak.supervisors", 8, "supervisors, each against its own server")
	flagCallers     = flag.Int("soak.callers", 3, "caller goroutines per supervisor")
	flagGrace       = flag.Duration("soak.grace", 30*time.Second, "how long after its deadline a call may return before it counts as hung: a bound on hanging, not on speed, so a loaded machine passes")
)

// settings of one soak run.
type settings struct {
	seed        uint64
	duration    time.Duration
	supervisors int
	callers     int
	grace       time.Duration
}

func loadSettings(t *testing.T) settings {
	t.Helper()
	s := settings{seed: *flagSeed, duration: *flagDuration, supervisors: *flagSupervisors, callers: *flagCallers, grace: *flagGrace}
	if s.seed == 0 {
		if v := os.Getenv("MCPSUP_SOAK_SEED"); v != "" {
			seed, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				t.Fatalf("MCPSUP_SOAK_SEED=%q: %v", v, err)
			}
			s.seed = seed
		}
	}
	if s.seed == 0 {
		s.seed = uint64(time.Now().UnixNano())
	}
	if s.duration <= 0 {
		if v := os.Getenv("MCPSUP_SOAK_DURATION"); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				t.Fatalf("MCPSUP_SOAK_DURATION=%q: %v", v, err)
			}
			s.duration = d
		}
	}
	if s.duration <= 0 {
		s.duration = 20 * time.Second
		if testing.Short() {
			s.duration = 5 * time.Second
		}
	}
	s.supervisors = max(s.supervisors, 1)
	s.callers = max(s.callers, 1)
	return s
}

// maxReports bounds the failure messages per invariant; the rest are
// counted.
const maxReports = 5

// checker reports invariant violations with the seed, from any goroutine.
type checker struct {
	t    *testing.T
	seed uint64

	mu     sync.Mutex
	counts map[string]int
	order  []string
	sealed bool // the test is ending: count, do not report
}

func newChecker(t *testing.T, seed uint64) *checker {
	return &checker{t: t, seed: seed, counts: map[string]int{}}
}

// fail records a violation of invariant.
func (c *checker) fail(invariant, format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts[invariant] == 0 {
		c.order = append(c.order, invariant)
	}
	c.counts[invariant]++
	if c.counts[invariant] <= maxReports && !c.sealed {
		c.t.Errorf("seed %d: %s: %s", c.seed, invariant, fmt.Sprintf(format, args...))
	}
}

// seal reports how often each invariant failed and stops reporting.
func (c *checker) seal() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sealed {
		return
	}
	for _, inv := range c.order {
		if n := c.counts[inv]; n > maxReports {
			c.t.Errorf("seed %d: %s: %d violations in all (%d shown)", c.seed, inv, n, maxReports)
		}
	}
	c.sealed = true
}
