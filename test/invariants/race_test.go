//go:build race

package invariants

// raceEnabled says the race detector is on: it makes every render about
// six times slower, so the combinations matrix is sampled (matrixShare).
const raceEnabled = true
