package fsm_test

import (
	"testing"
	"time"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/fsm"
)

func readyMachine(b *testing.B) *fsm.Machine {
	m := fsm.New(fsm.Config{MaxSessions: 1 << 20})
	for _, tr := range []fsm.Trigger{{Kind: fsm.Started}, {Kind: fsm.HandshakeSucceeded, Generation: 1}, {Kind: fsm.DiscoverySucceeded, Generation: 1}} {
		if _, err := m.Step(tr); err != nil {
			b.Fatal(err)
		}
	}
	return m
}

// BenchmarkStep measures one Step of the hottest path: a call failure that
// stays ready (an internal transition with its event).
func BenchmarkStep(b *testing.B) {
	m := readyMachine(b)
	tr := fsm.Trigger{Kind: fsm.CallFailed, Generation: 1, Verdict: classify.Verdict{Class: classify.ServerError, HTTPStatus: 500}, Now: t0}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Step(tr); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStepReconnect measures a full reconnect cycle, three Steps per
// op: session died, handshake succeeded, discovery succeeded.
func BenchmarkStepReconnect(b *testing.B) {
	m := readyMachine(b)
	now := t0
	dead := classify.Verdict{Class: classify.Transport}
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Hour)
		gen := m.Generation()
		for _, tr := range []fsm.Trigger{
			{Kind: fsm.SessionDied, Generation: gen, Verdict: dead, Now: now},
			{Kind: fsm.HandshakeSucceeded, Generation: gen + 1, Now: now},
			{Kind: fsm.DiscoverySucceeded, Generation: gen + 1, Now: now},
		} {
			if _, err := m.Step(tr); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkNew measures what one connection's machine costs to create.
func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = fsm.New(fsm.Config{})
	}
}
