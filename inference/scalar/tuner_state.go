package scalar

import (
	"encoding/binary"
	"errors"
	"math"
)

// MarshalBinary encodes the tuner's history (not its Slice), so that a
// checkpointed run resumes with exactly the same adaptation.
func (t *Tuner) MarshalBinary() ([]byte, error) {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint64(b, uint64(t.n))
	binary.LittleEndian.PutUint64(b[8:], math.Float64bits(t.sumJump))
	return b, nil
}

// UnmarshalBinary restores a history written by MarshalBinary.
func (t *Tuner) UnmarshalBinary(b []byte) error {
	if len(b) != 16 {
		return errors.New("scalar: bad tuner state")
	}
	t.n = int(binary.LittleEndian.Uint64(b))
	t.sumJump = math.Float64frombits(binary.LittleEndian.Uint64(b[8:]))
	return nil
}
