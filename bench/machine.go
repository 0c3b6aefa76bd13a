package bench

import (
	"bufio"
	"os"
	"runtime"
	"strings"
	"time"
)

// Machine describes where a report was measured.
type Machine struct {
	CPU       string // model name from /proc/cpuinfo, "unknown" elsewhere
	Cores     int    // runtime.NumCPU
	GoVersion string // runtime.Version
	OS, Arch  string
	Date      time.Time
}

// ThisMachine describes the running machine; now is the report's date.
func ThisMachine(now time.Time) Machine {
	return Machine{
		CPU:       cpuModel(),
		Cores:     runtime.NumCPU(),
		GoVersion: runtime.Version(),
		OS:        runtime.GOOS,
		Arch:      runtime.GOARCH,
		Date:      now.UTC(),
	}
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(val)
		}
	}
	return "unknown"
}
