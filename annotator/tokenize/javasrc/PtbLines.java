// Line-by-line front end to Stanford CoreNLP's PTBTokenizer, kept running so
// captions can be tokenised one at a time without starting a JVM each time.
//
// Each input line is tokenised on its own with the options the command line
// tool uses for "-preserveLines -lowerCase" (",tokenizeNLs", tokens lower-cased
// with Locale.ENGLISH, joined by one space) and written as one output line.
// Output is flushed whenever no further input is waiting.
//
// Run: java -cp stanford-corenlp-3.4.1.jar PtbLines.java

import edu.stanford.nlp.ling.CoreAnnotations;
import edu.stanford.nlp.ling.CoreLabel;
import edu.stanford.nlp.process.CoreLabelTokenFactory;
import edu.stanford.nlp.process.PTBTokenizer;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.StringReader;
import java.util.Locale;

public class PtbLines {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, "UTF-8"));
        CoreLabelTokenFactory factory = new CoreLabelTokenFactory();
        String line;
        while ((line = in.readLine()) != null) {
            PTBTokenizer<CoreLabel> tok = new PTBTokenizer<CoreLabel>(new StringReader(line), factory, ",tokenizeNLs");
            boolean first = true;
            while (tok.hasNext()) {
                CoreLabel label = tok.next();
                String text = label.get(CoreAnnotations.TextAnnotation.class);
                if ("*NL*".equals(text)) {
                    continue;  // a line separator inside the line: treat as a space
                }
                if (!first) {
                    out.write(' ');
                }
                out.write(text.toLowerCase(Locale.ENGLISH));
                first = false;
            }
            out.write('\n');
            if (!in.ready()) {
                out.flush();
            }
        }
        out.flush();
    }
}
