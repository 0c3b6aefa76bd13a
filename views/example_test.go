package views_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/views"
)

const recording = `{"v":1,"kind":"transition","server":"docs","seq":1,"time":"2026-03-14T09:00:00Z","from":"idle","to":"connecting","trigger":"started","guard":"resume-none","generation":1}
{"v":1,"kind":"transition","server":"docs","seq":2,"time":"2026-03-14T09:00:00.02Z","from":"connecting","to":"ready","trigger":"discovery-succeeded","generation":1}
{"v":1,"kind":"transition","server":"docs","seq":3,"time":"2026-03-14T09:00:02Z","from":"ready","to":"ready","trigger":"catalog-listed","generation":1}
{"v":1,"kind":"call-failed","server":"docs","time":"2026-03-14T09:00:03Z","op":"tools/call","name":"search","delivery":"answered","verdict":{"class":"server-error","http_status":500},"generation":1}
`

func ExampleWriteTimeline() {
	evs, err := events.ReadJSONLines(strings.NewReader(recording))
	if err == nil {
		err = views.WriteTimeline(os.Stdout, evs)
	}
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// == docs: 4 events, last state ready, generation 1
	//     +0.000s  #1   idle -> connecting               started [resume-none]; gen 1
	//     +0.020s  #2   connecting -> ready              discovery-succeeded; gen 1
	//     +2.000s  #3   ready (internal)                 catalog-listed; gen 1
	//     +3.000s       call-failed                      tools/call "search": server-error (HTTP 500); delivery answered; gen 1
}

func ExampleWriteMermaid() {
	evs, err := events.ReadJSONLines(strings.NewReader(recording))
	if err == nil {
		err = views.WriteMermaid(os.Stdout, evs)
	}
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// stateDiagram-v2
	//     state docs {
	//         state "idle" as docs__idle
	//         state "connecting" as docs__connecting
	//         state "ready" as docs__ready
	//         [*] --> docs__idle
	//         docs__idle --> docs__connecting: started
	//         docs__connecting --> docs__ready: discovery-succeeded
	//         docs__ready --> docs__ready: catalog-listed
	//     }
}
