//go:build !amd64

package template

// haveSHANI is false: no assembly for this architecture.
const haveSHANI = false

// shaNIBlocks is never called where haveSHANI is false.
func shaNIBlocks(s *[8]uint32, p *byte, blocks int) { panic("template: no SHA-NI") }
