use pgasync::clock::Clock;
use pgasync::scenario::{Knobs, Scenario};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let k = Knobs { rows_per_shard: Some(300), ..Default::default() };
    let s = Scenario::build(&args[1], &k).unwrap();
    let mut run = s.start(true, Clock::virtual_clock(), true).unwrap();
    let r = run.run_to_end();
    for e in &run.es.trace.events {
        println!("{:>10} {:?}", e.time_ns, e.kind);
    }
    println!("{r:?}");
}
