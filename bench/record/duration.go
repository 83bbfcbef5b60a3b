package record

import (
	"fmt"
	"time"
)

// Duration is a time.Duration that reads and writes JSON as seconds.
type Duration time.Duration

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Seconds returns the duration in seconds.
func (d Duration) Seconds() float64 { return time.Duration(d).Seconds() }

// MarshalJSON writes seconds.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprintf("%g", time.Duration(d).Seconds())), nil
}

// UnmarshalJSON reads seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s float64
	if _, err := fmt.Sscanf(string(b), "%g", &s); err != nil {
		return fmt.Errorf("duration %s: want seconds", b)
	}
	*d = Duration(s * float64(time.Second))
	return nil
}
