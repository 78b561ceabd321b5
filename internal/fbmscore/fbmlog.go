package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// The layout of an fbm log file, as its documentation states it (fbm's
// mc/log.h, dft/dft.h, mc/mc.h), on a little-endian machine with the usual
// C alignment (x86-64, where fbm was built): a sequence of records, each a
// 16-byte header, the data, and a 16-byte trailer that repeats the header
// with another magic number (0x9e06; log.h says the trailer's index is
// complemented, but log.c writes it unchanged, as read here). A header is
//
//	uint16 magic (0xf41a), int16 type (a character), int32 index,
//	int32 size (bytes of data), int32 last_of_index
const (
	headerMagic  = 0xf41a
	trailerMagic = 0x9e06
	headerLen    = 16
)

// record is one record of an fbm log file.
type record struct {
	Type  byte
	Index int
	Data  []byte
}

// logReader reads the records of an fbm log file in order.
type logReader struct {
	r   *bufio.Reader
	off int64 // offset of the next record, for messages
}

func newLogReader(r io.Reader) *logReader { return &logReader{r: bufio.NewReaderSize(r, 1<<20)} }

// next returns the next record, io.EOF after the last one, and an error
// naming the offset if the file is not an fbm log (a bad magic number, a
// trailer that does not match its header, a truncated record).
func (lr *logReader) next() (record, error) {
	var h [headerLen]byte
	if _, err := io.ReadFull(lr.r, h[:]); err != nil {
		if err == io.EOF {
			return record{}, io.EOF
		}
		return record{}, fmt.Errorf("fbm log: truncated header at byte %d: %w", lr.off, err)
	}
	le := binary.LittleEndian
	magic, typ := le.Uint16(h[0:]), int16(le.Uint16(h[2:]))
	index, size := int32(le.Uint32(h[4:])), int32(le.Uint32(h[8:]))
	if magic != headerMagic {
		return record{}, fmt.Errorf("fbm log: bad magic number %#x at byte %d (not an fbm log file, or written on a machine of another byte order)", magic, lr.off)
	}
	if size < 0 || typ < 0 || typ >= 128 {
		return record{}, fmt.Errorf("fbm log: bad record header at byte %d (type %d, size %d)", lr.off, typ, size)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(lr.r, data); err != nil {
		return record{}, fmt.Errorf("fbm log: record at byte %d truncated: %w", lr.off, err)
	}
	var t [headerLen]byte
	if _, err := io.ReadFull(lr.r, t[:]); err != nil {
		return record{}, fmt.Errorf("fbm log: record at byte %d has no trailer: %w", lr.off, err)
	}
	if le.Uint16(t[0:]) != trailerMagic || int16(le.Uint16(t[2:])) != typ ||
		int32(le.Uint32(t[4:])) != index || int32(le.Uint32(t[8:])) != size {
		return record{}, fmt.Errorf("fbm log: the trailer of the record at byte %d does not match its header", lr.off)
	}
	lr.off += int64(2*headerLen) + int64(size)
	return record{Type: byte(typ), Index: int(index), Data: data}, nil
}

// state is what one iteration of dft-mc saved, for a model of one
// diffusion tree: the tree, the divergence function's c1 (a(t) = c1/(1-t))
// and the diffusion's standard deviations, and dft-mc's cumulative CPU time.
type state struct {
	Index int
	// Parents[k] is the parent of fbm's node k-(N-1): the order of fbm's
	// 'R' record, nodes -(N-1) … -1, an unused slot for node 0, then the
	// cases 1 … N. The root's parent is 0.
	Parents []int32
	// Divt[j-1] is the divergence time of node -j (record 'T').
	Divt []float64
	// C1 and SD are from the 'S' record: c1 of the first tree and its
	// common diffusion standard deviation.
	C1, SD float64
	// CPUms is the 'i' record's cumulative CPU time of dft-mc, in ms.
	CPUms int
}

// Offsets in the records, from the structures of fbm's dft.h and mc.h: the
// 'S' record (dft_hypers) holds c0, c1, c2 and d_SD_cm as arrays of
// Max_trees = 9 doubles each, then noise_cm, an int, and the per-target
// standard deviations; the 'i' record (mc_iter) has the int time (ms) at
// byte 144 (after two floats, 92 reserved bytes, a float, an int, a float,
// a double and six ints).
const (
	maxTrees   = 9
	offC1      = 8 * maxTrees
	offSDcm    = 8 * 3 * maxTrees
	hypersSize = 8*(4*maxTrees+1) + 8 // up to SD, the int padded to 8
	offTime    = 144
)

// readStates reads the iterations of an fbm log file of a one-tree model
// with n training cases, calling fn for each in order (iteration 0, the
// specifications, has no state and is skipped). A state is complete when
// its index has records 'S', 'T', 'R' and 'i'; an iteration that lacks one
// is an error. With partial, the log may be that of a run stopped
// mid-iteration: a truncated last record and an incomplete last iteration
// end the reading without error (the iterations before are read).
func readStates(r io.Reader, n int, partial bool, fn func(*state) error) error {
	lr := newLogReader(r)
	var cur *state
	var have [128]bool
	flush := func() error {
		if cur == nil {
			return nil
		}
		for _, t := range "STRi" {
			if !have[t] {
				return fmt.Errorf("fbm log: iteration %d has no %q record", cur.Index, t)
			}
		}
		err := fn(cur)
		cur, have = nil, [128]bool{}
		return err
	}
	le := binary.LittleEndian
	for {
		rec, err := lr.next()
		if err == io.EOF || (partial && errors.Is(err, io.ErrUnexpectedEOF)) {
			if partial && cur != nil && !(have['S'] && have['T'] && have['R'] && have['i']) {
				return nil // the incomplete last iteration
			}
			return flush()
		}
		if err != nil {
			return err
		}
		switch rec.Type {
		case 'S', 'T', 'R', 'i':
		default:
			continue // specifications, latent vectors, locations
		}
		if cur != nil && rec.Index != cur.Index {
			if err := flush(); err != nil {
				return err
			}
		}
		if cur == nil {
			cur = &state{Index: rec.Index}
		}
		have[rec.Type] = true
		d := rec.Data
		switch rec.Type {
		case 'S':
			if len(d) < hypersSize+8 {
				return fmt.Errorf("fbm log: iteration %d: 'S' record of %d bytes, too short", rec.Index, len(d))
			}
			cur.C1 = math.Float64frombits(le.Uint64(d[offC1:]))
			cur.SD = math.Float64frombits(le.Uint64(d[offSDcm:]))
		case 'T':
			if len(d) != 8*(n-1) {
				return fmt.Errorf("fbm log: iteration %d: 'T' record of %d bytes, want %d for %d cases and one tree", rec.Index, len(d), 8*(n-1), n)
			}
			cur.Divt = make([]float64, n-1)
			for j := range cur.Divt {
				cur.Divt[j] = math.Float64frombits(le.Uint64(d[8*j:]))
			}
		case 'R':
			if len(d) != 4*2*n {
				return fmt.Errorf("fbm log: iteration %d: 'R' record of %d bytes, want %d for %d cases and one tree", rec.Index, len(d), 8*n, n)
			}
			cur.Parents = make([]int32, 2*n)
			for j := range cur.Parents {
				cur.Parents[j] = int32(le.Uint32(d[4*j:]))
			}
		case 'i':
			if len(d) < offTime+4 {
				return fmt.Errorf("fbm log: iteration %d: 'i' record of %d bytes, too short", rec.Index, len(d))
			}
			cur.CPUms = int(int32(le.Uint32(d[offTime:])))
		}
	}
}

// errNotTree reports a parent array that is not a binary tree.
var errNotTree = errors.New("not a binary tree over the cases")
