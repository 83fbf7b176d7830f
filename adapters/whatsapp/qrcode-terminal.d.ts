// qrcode-terminal 0.12.0 ships no types; this is the one function used.
declare module "qrcode-terminal" {
  const qrcode: {
    generate(text: string, options: { small?: boolean }, callback: (rendered: string) => void): void;
  };
  export default qrcode;
}
