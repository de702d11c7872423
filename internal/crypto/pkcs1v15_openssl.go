//go:build openssl

package crypto

import "crypto/subtle"

// sessionKeyFromEM copies the message of the PKCS#1 v1.5 encryption block
// em (EME-PKCS1-v1_5, RFC 8017 §7.2.2) into key when em is well formed
// and its message is exactly len(key) bytes, and leaves key as it is
// otherwise, in time that depends on neither. It is crypto/rsa's
// decryptPKCS1v15 and DecryptPKCS1v15SessionKey step for step
// (TestSessionKeyFromEM compares them), for keys whose raw RSA operation
// is OpenSSL's.
func sessionKeyFromEM(em, key []byte) {
	firstByteIsZero := subtle.ConstantTimeByteEq(em[0], 0)
	secondByteIsTwo := subtle.ConstantTimeByteEq(em[1], 2)
	// The rest must be non-zero padding, a zero, then the message.
	// lookingForIndex is 1 while no zero was seen; index is the first
	// zero's offset.
	lookingForIndex, index := 1, 0
	for i := 2; i < len(em); i++ {
		equals0 := subtle.ConstantTimeByteEq(em[i], 0)
		index = subtle.ConstantTimeSelect(lookingForIndex&equals0, i, index)
		lookingForIndex = subtle.ConstantTimeSelect(equals0, 0, lookingForIndex)
	}
	// At least 8 bytes of padding, starting two bytes in.
	validPS := subtle.ConstantTimeLessOrEq(2+8, index)
	valid := firstByteIsZero & secondByteIsTwo & (^lookingForIndex & 1) & validPS
	index = subtle.ConstantTimeSelect(valid, index+1, 0)
	valid &= subtle.ConstantTimeEq(int32(len(em)-index), int32(len(key)))
	subtle.ConstantTimeCopy(valid, key, em[len(em)-len(key):])
}
