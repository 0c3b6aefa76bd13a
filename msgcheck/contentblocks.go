package msgcheck

import "github.com/mcpsup/mcpsup/internal/jsonscan"

// blockTree says where a payload's content trees start.
type blockTree uint8

const (
	noBlocks         blockTree = iota
	blocksAtTop                // "content" is an array of blocks (tools/call)
	blocksInMessages           // each "messages" element's "content" is a block or an array of them
)

// The containers a content tree is made of, in the order a scan enters them.
type treeNode uint8

const (
	nodeOutside treeNode = iota
	nodePayload
	nodeMessages // blocksInMessages: the payload's "messages"
	nodeMessage  // one of its elements
	nodeBlock    // a content block: counted
	nodeBlocks   // an array of blocks: each element counted
)

// contentBlocks counts the content blocks of the trees tree locates in the
// well-formed JSON object obj, no further than limit+1. go-sdk decodes a
// block into mcp's wireContent, whose "content" is an array of blocks again
// (mcp/content.go), so blocks nest without bound. The containers form a
// chain (blocks hold arrays of blocks), so the scan keeps only the chain's
// depth and which kind its first level below the messages was.
func contentBlocks(obj []byte, tree blockTree, limit int) int {
	if tree == noBlocks {
		return 0
	}
	// below is the depth of the chain's first block or blocks array, and
	// belowKind its kind: under it the two alternate.
	below, belowKind := 2, nodeBlocks
	if tree == blocksInMessages {
		below = 4
	}
	kindAt := func(d int) treeNode {
		switch {
		case d == 1:
			return nodePayload
		case d == 2 && tree == blocksInMessages:
			return nodeMessages
		case d == 3 && tree == blocksInMessages:
			return nodeMessage
		case (d-below)%2 == 0:
			return belowKind
		case belowKind == nodeBlock:
			return nodeBlocks
		default:
			return nodeBlock
		}
	}
	total := 0
	depth, chain := 0, 0 // chain: the containers at depths 1..chain are the tree's
	keyed := false       // the last key in the chain's innermost object leads on
	expecting := false   // the chain's innermost blocks array awaits an element
	count := func() {
		if expecting {
			total++
			expecting = false
		}
	}
	for i := 0; i < len(obj) && total <= limit; i++ {
		c := obj[i]
		inner := nodeOutside
		if depth == chain && depth > 0 {
			inner = kindAt(depth)
		}
		switch c {
		case '"':
			end, ok := jsonscan.StringEnd(obj, i+1)
			if !ok {
				return total
			}
			switch inner {
			case nodePayload, nodeMessage, nodeBlock:
				keyed = isKey(obj, i, end, leadKey(inner, tree))
			case nodeBlocks:
				count()
			}
			i = end
		case '{', '[':
			if depth == 0 {
				depth, chain = 1, 1 // obj itself
				if c != '{' {
					return 0
				}
				continue
			}
			next := nodeOutside
			switch inner {
			case nodePayload:
				if keyed && c == '[' {
					next = nodeMessages
					if tree == blocksAtTop {
						next = nodeBlocks
					}
				}
			case nodeMessages:
				if c == '{' {
					next = nodeMessage
				}
			case nodeMessage:
				if keyed {
					next, belowKind = nodeBlocks, nodeBlocks
					if c == '{' {
						next, belowKind = nodeBlock, nodeBlock
						total++ // a message's one block
					}
				}
			case nodeBlock:
				if keyed && c == '[' {
					next = nodeBlocks
				}
			case nodeBlocks:
				count()
				if c == '{' {
					next = nodeBlock
				}
			}
			depth++
			if next != nodeOutside {
				chain = depth
				expecting = next == nodeBlocks
			}
			keyed = false
		case '}', ']':
			if depth == chain {
				chain--
			}
			depth--
			keyed, expecting = false, false
		case ',':
			if inner == nodeBlocks {
				expecting = true
			}
			keyed = false
		case ' ', '\t', '\n', '\r', ':':
		default: // a number, true, false or null
			if inner == nodeBlocks {
				count()
			}
			keyed = false
		}
	}
	return total
}

// leadKey is the key of a chain object whose value leads down the tree.
func leadKey(n treeNode, tree blockTree) string {
	if n == nodePayload && tree == blocksInMessages {
		return "messages"
	}
	return "content"
}

// inputRequestsKey holds a result's input requests (the 2026-07-28 multi
// round-trip). go-sdk decodes them with encoding/json, whose keys match in
// any letter case, so [objectsUnder] counts every object in it (9,997
// `{"content":[]}` sampling messages, 150 KB, allocated 628 MiB).
const inputRequestsKey = "inputRequests"

// objectsUnder counts the JSON objects within the values of key at the top
// level of the well-formed JSON object obj, no further than limit+1.
func objectsUnder(obj []byte, key string, limit int) int {
	total := 0
	for v := range keyValues(obj, key) {
		for i := 0; i < len(v) && total <= limit; i++ {
			switch v[i] {
			case '"':
				end, ok := jsonscan.StringEnd(v, i+1)
				if !ok {
					return total
				}
				i = end
			case '{':
				total++
			}
		}
		if total > limit {
			break
		}
	}
	return total
}
