package events

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/mcpsup/mcpsup/classify"
)

// Version is the version of the JSON form, written as "v". It changes only
// when a field changes meaning or is removed; added fields keep it.
const Version = 1

// ErrVersion is returned (wrapped) by [Event.UnmarshalJSON] for a "v" other
// than [Version], missing included.
var ErrVersion = errors.New("events: unsupported JSON version")

// plainEvent is Event without its methods.
type plainEvent Event

// jsonEvent is the JSON form of an Event: its tagged fields, and those
// written in a form of their own.
type jsonEvent struct {
	V int `json:"v"`
	*plainEvent
	Verdict *jsonVerdict  `json:"verdict,omitempty"`
	Lists   []jsonOutcome `json:"lists,omitempty"`
	DelayMS json.Number   `json:"delay_ms,omitempty"`
}

type jsonVerdict struct {
	Class         string      `json:"class"`
	HTTPStatus    int         `json:"http_status,omitempty"`
	RPC           *jsonRPC    `json:"rpc,omitempty"`
	RetryAfterMS  json.Number `json:"retry_after_ms,omitempty"`
	Method        string      `json:"method,omitempty"`
	SessionIDSent bool        `json:"session_id_sent,omitempty"`
	Detail        string      `json:"detail,omitempty"`
}

type jsonRPC struct {
	Code    int64  `json:"code"`
	Message string `json:"message,omitempty"`
	HasID   bool   `json:"has_id,omitempty"`
}

type jsonOutcome struct {
	ListOutcome
	Verdict *jsonVerdict `json:"verdict,omitempty"`
}

// MarshalJSON writes the JSON form of the package doc. It fails only for a
// verdict whose class is out of range.
func (e Event) MarshalJSON() ([]byte, error) {
	e.Time = e.Time.UTC()
	j := jsonEvent{V: Version, plainEvent: (*plainEvent)(&e), DelayMS: millis(e.Delay)}
	var err error
	if j.Verdict, err = toJSONVerdict(e.Verdict); err != nil {
		return nil, fmt.Errorf("events: field verdict: %w", err)
	}
	for i, l := range e.Lists {
		v, err := toJSONVerdict(l.Verdict)
		if err != nil {
			return nil, fmt.Errorf("events: field lists[%d].verdict: %w", i, err)
		}
		j.Lists = append(j.Lists, jsonOutcome{l, v})
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads the JSON form, ignoring unknown fields. A "v" other
// than [Version] fails with [ErrVersion], a bad time with its
// [time.ParseError], a bad duration or class with an error naming the field.
// Times decode in UTC.
func (e *Event) UnmarshalJSON(b []byte) error {
	var out Event
	j := jsonEvent{plainEvent: (*plainEvent)(&out)}
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("events: %w", err)
	}
	if j.V != Version {
		return fmt.Errorf("%w: v=%d, want %d", ErrVersion, j.V, Version)
	}
	out.Time = out.Time.UTC()
	var err error
	if out.Delay, err = parseMillis(j.DelayMS); err != nil {
		return fmt.Errorf("events: field delay_ms: %w", err)
	}
	if out.Verdict, err = fromJSONVerdict(j.Verdict); err != nil {
		return fmt.Errorf("events: field verdict: %w", err)
	}
	for i, l := range j.Lists {
		if l.ListOutcome.Verdict, err = fromJSONVerdict(l.Verdict); err != nil {
			return fmt.Errorf("events: field lists[%d].verdict: %w", i, err)
		}
		out.Lists = append(out.Lists, l.ListOutcome)
	}
	*e = out
	return nil
}

// toJSONVerdict returns nil (omitted) for the zero verdict; "rpc" only when
// Present.
func toJSONVerdict(v classify.Verdict) (*jsonVerdict, error) {
	if v == (classify.Verdict{}) {
		return nil, nil
	}
	class, err := v.Class.MarshalText()
	if err != nil {
		return nil, err
	}
	j := &jsonVerdict{Class: string(class), HTTPStatus: v.HTTPStatus, RetryAfterMS: millis(v.RetryAfter),
		Method: v.Method, SessionIDSent: v.SessionIDSent, Detail: v.Detail}
	if v.RPC.Present {
		j.RPC = &jsonRPC{Code: v.RPC.Code, Message: v.RPC.Message, HasID: v.RPC.HasID}
	}
	return j, nil
}

func fromJSONVerdict(j *jsonVerdict) (classify.Verdict, error) {
	if j == nil {
		return classify.Verdict{}, nil
	}
	ra, err := parseMillis(j.RetryAfterMS)
	if err != nil {
		return classify.Verdict{}, fmt.Errorf("retry_after_ms: %w", err)
	}
	var class classify.Class
	if err := class.UnmarshalText([]byte(j.Class)); err != nil {
		return classify.Verdict{}, fmt.Errorf("class: %w", err)
	}
	v := classify.Verdict{Class: class, HTTPStatus: j.HTTPStatus, RetryAfter: ra,
		Method: j.Method, SessionIDSent: j.SessionIDSent, Detail: j.Detail}
	if j.RPC != nil {
		v.RPC = classify.RPCError{Present: true, Code: j.RPC.Code, Message: j.RPC.Message, HasID: j.RPC.HasID}
	}
	return v, nil
}

// millis renders d in milliseconds as an exact decimal ("1500", "0.25",
// "-3.000001"); "" (omitted) for 0.
func millis(d time.Duration) json.Number {
	if d == 0 {
		return ""
	}
	s := big.NewRat(int64(d), 1e6).FloatString(6)
	return json.Number(strings.TrimSuffix(strings.TrimRight(s, "0"), "."))
}

// parseMillis reads a number of milliseconds, exactly, rounded to the
// nanosecond (halves away from zero).
func parseMillis(n json.Number) (time.Duration, error) {
	if n == "" {
		return 0, nil
	}
	// The float bounds the exponent before big.Rat builds the number;
	// ParseInt bounds it exactly.
	f, err := strconv.ParseFloat(string(n), 64)
	r, ok := new(big.Rat).SetString(string(n))
	if err != nil || !ok || math.Abs(f) > 1e13 {
		return 0, fmt.Errorf("%s ms is not a number in range", n)
	}
	ns, err := strconv.ParseInt(r.Mul(r, big.NewRat(1e6, 1)).FloatString(0), 10, 64)
	return time.Duration(ns), err
}

// MaxLineBytes bounds one line of a JSON-lines event stream read by
// [ReadJSONLines].
const MaxLineBytes = 1 << 20

// LineError is the error of [ReadJSONLines] for a line it cannot read. It
// wraps the cause ([ErrVersion], a JSON syntax error, bufio.ErrTooLong).
type LineError struct {
	Line int // 1-based
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("events: line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// ReadJSONLines reads events written one per line by [JSONLines], in order.
// Blank lines are skipped. It stops at the first bad line with a
// [*LineError], returning the events read before it; a line longer than
// [MaxLineBytes] (its line break not counted) is a bad line.
func ReadJSONLines(r io.Reader) ([]Event, error) {
	sc := bufio.NewScanner(r)
	// bufio.Scanner refuses a token that fills its buffer before the line
	// break shows: one byte more, so a line of MaxLineBytes is read.
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes+1)
	var out []Event
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var e Event
		if err := e.UnmarshalJSON(b); err != nil {
			return out, &LineError{Line: line, Err: err}
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return out, &LineError{Line: line + 1, Err: err}
	}
	return out, nil
}
