package main

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSizes(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []int64
	}{
		{name: "ok/one", in: "1MiB", want: []int64{1 << 20}},
		{name: "ok/units-and-bytes", in: "1GiB,16MiB,512KiB,100", want: []int64{100, 512 << 10, 16 << 20, 1 << 30}},
		{name: "ok/spaces-and-repeats", in: " 1MiB , 1048576,2MiB", want: []int64{1 << 20, 2 << 20}},
		{name: "fail/empty", in: ""},
		{name: "fail/empty-item", in: "1MiB,,2MiB"},
		{name: "fail/zero", in: "0"},
		{name: "fail/negative", in: "-1MiB"},
		{name: "fail/over-1GiB", in: "1MiB,1025MiB"},
		{name: "fail/unit", in: "1MB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseSizes(tc.in)
			if tc.want == nil {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			again, err := parseSizes(sizeList(got))
			require.NoError(t, err)
			assert.Equal(t, got, again, "sizeList round-trips")
		})
	}
}

func FuzzParseSizes(f *testing.F) {
	for _, s := range []string{"1MiB,16MiB,256MiB,1GiB", "1", "0", "1GiB,1GiB", "9999999999999GiB", ",", "3KiB, 7"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := parseSizes(in)
		if err != nil {
			return
		}
		require.NotEmpty(t, got)
		require.True(t, slices.IsSorted(got))
		require.Equal(t, len(got), len(slices.Compact(slices.Clone(got))), "no repeats")
		require.Positive(t, got[0])
		require.LessOrEqual(t, got[len(got)-1], int64(maxResponseSize))
	})
}

func TestRepsFor(t *testing.T) {
	for _, tc := range []struct {
		size int64
		max  int
		want int
	}{
		{1 << 20, 5, 5}, {256 << 20, 5, 2}, {512 << 20, 5, 1}, {1 << 30, 5, 1}, {1 << 20, 1, 1},
	} {
		assert.Equal(t, tc.want, repsFor(tc.size, tc.max), "size %d max %d", tc.size, tc.max)
	}
}
