//! A release in parts made from a whole one: every layer cut into row ranges, each packed into
//! files of its own (as a host packs its kept part), with a manifest of format 3 that lists them,
//! beside it or at URLs. What the readers' tests of releases in parts read.

use kingmaker_tablefmt::layer::LayerFile;
use kingmaker_tablefmt::release::manifest::{
    read_manifest, write_manifest, Manifest, ManifestPart,
};
use kingmaker_tablefmt::release::piece::pack_rows;
use kingmaker_tablefmt::release::PackOptions;
use std::path::Path;

/// Cut every layer of the whole release in `src` into `parts` row ranges, pack them into `dst`,
/// and write `dst`'s manifest. With `url_base`, each part file's entry gets the url
/// `url_base` + its name (the files stay in `dst`: serve them there, or move them away).
pub fn split_release(src: &Path, dst: &Path, parts: u64, url_base: Option<&str>) -> Manifest {
    let whole = read_manifest(src).expect("a whole release");
    std::fs::create_dir_all(dst).unwrap();
    let opts = PackOptions {
        block_states: whole.layers[0].block_states,
        ..PackOptions::default()
    };
    let mut m = whole.clone();
    m.files.clear();
    for layer in &mut m.layers {
        let file = LayerFile::open(&src.join(&layer.file)).expect("the layer's file");
        layer.file.clear();
        layer.values_file = None;
        layer.blocks = 0;
        for k in 0..parts {
            let first = k * layer.states / parts;
            let states = (k + 1) * layer.states / parts - first;
            let name = kingmaker_tablefmt::kept::part_layer_name(&layer.name, k as usize);
            let (mut f, mut v, written) =
                pack_rows(&file, first, states, &whole.game, &name, dst, &opts).unwrap();
            layer.blocks += written.blocks;
            if let Some(base) = url_base {
                f.url = Some(format!("{base}{}", f.path));
                v.url = Some(format!("{base}{}", v.path));
            }
            layer.parts.push(ManifestPart {
                name,
                first,
                states,
                file: f.path.clone(),
                values_file: v.path.clone(),
                counts: written.counts,
                max_depth: written.max_depth,
            });
            m.files.extend([f, v]);
        }
    }
    m.format_version = m.needed_version();
    write_manifest(dst, &m).expect("the manifest of the release in parts");
    m
}
