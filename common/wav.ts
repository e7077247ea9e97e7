// 16-bit mono PCM WAV files, the one audio format every speech engine here reads and the sim
// writes: their header, and silence for start-up checks and tests.

/** The 44-byte header of a 16-bit mono PCM WAV file of so many samples at `rate`. */
export function wavHeader(samples: number, rate: number): Buffer {
  const data = samples * 2;
  const h = Buffer.alloc(44);
  h.write("RIFF", 0, "ascii");
  h.writeUInt32LE(36 + data, 4);
  h.write("WAVEfmt ", 8, "ascii");
  h.writeUInt32LE(16, 16); // the fmt chunk's size
  h.writeUInt16LE(1, 20); // PCM
  h.writeUInt16LE(1, 22); // mono
  h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(rate * 2, 28); // bytes a second
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write("data", 36, "ascii");
  h.writeUInt32LE(data, 40);
  return h;
}

/** So many seconds of silence at 16 kHz, which whisper.cpp's server reads without ffmpeg. */
export function silentWav(seconds: number): Buffer {
  const samples = Math.round(seconds * 16_000);
  return Buffer.concat([wavHeader(samples, 16_000), Buffer.alloc(samples * 2)]);
}
