// The two names the explorer page uses: regl-scatterplot's createScatterplot and
// createRenderer (one WebGL context shared by every panel), with regl, the camera and the
// line renderer inside, so the page needs no other file.
export { default as createScatterplot, createRenderer } from "regl-scatterplot";
